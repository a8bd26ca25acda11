// The guard of a graded Node run (envs/testrun/grading.py loads it into every node process of the run with
// NODE_OPTIONS=--require, before any of the agent's code). In a node:test child (NODE_TEST_CONTEXT, set by the
// runner for the children it starts), the runner never ends the process itself: the child ends when its tests
// are done, and its standard output is the runner's channel. So an explicit exit there is the product's: one
// that writes a recorded passing run to the channel and exits 0 would be graded as passing, however it reached
// `process` (the screens read spellings; `(0, eval)('this')` is the global object in any mode). Every explicit
// exit ends in `process.reallyExit` (`process.exit` calls it), which is replaced, for good, by a refusal: the
// guard's mark on the run's stderr (the runner reports a child's stderr; verdict.py grades the run 0) and
// status 1. `process.exit` itself stays as it is, so tests may still mock it.
'use strict'
if (process.env.NODE_TEST_CONTEXT) {
  const fs = require('fs')
  const really = process.reallyExit
  const refused = function reallyExit () {
    try {
      fs.writeSync(2, "autoinstall-guard: refused an explicit exit of a node:test child (ending it is the runner's)\n")
    } catch (e) {}
    really.call(process, 1)
  }
  Object.defineProperty(process, 'reallyExit', { value: refused, writable: false, configurable: false })
}
// Node's assertion module, frozen before any of the agent's code runs, in every node process of the run: product
// code that changes what its functions are (`Object.assign(require('assert'), ...)`, `Object.defineProperty`, a
// dynamic import's default, an alias the screens cannot follow) would make every failing assertion pass. Tests
// read it; none needs to change it (a change then throws in strict code and does nothing in sloppy code).
for (const name of ['assert', 'assert/strict']) {
  try {
    const m = require(name)
    Object.freeze(m)
    if (m.strict) Object.freeze(m.strict)
  } catch (e) {}
}
// The tests are the answer key: `assert.strictEqual(add(2, 3), 5)` names a call and its answer, so a product that
// reads the test files and answers each asserted call with its asserted value passes without computing anything.
// With the agent's code on the stack (a file the grader took from it: taken.txt, beside this file), or in work the
// agent's code handed on (below), reading a test's source is refused: a script under a test/, tests/, __tests__ or
// spec/ folder, or named *.test.*, *.spec.*, test-*, *-test.* or *_test.*, in the workdir or among the task's start
// copies. Data files stay readable.
;(function guardTheTests () {
  const fs = require('fs')
  const path = require('path')
  let taken
  try {
    taken = new Set(fs.readFileSync(path.join(__dirname, 'taken.txt'), 'utf8').split('\n')
      .map((line) => line.split('\t')[0]).filter(Boolean))
  } catch (e) {
    return
  }
  if (!taken.size) return
  let workdir = process.cwd()  // the task's workdir, as the grader wrote it beside this file: a process the tests
  try {  // start in another folder guards the same tests
    workdir = fs.realpathSync(fs.readFileSync(path.join(__dirname, 'workdir.txt'), 'utf8').trim() || workdir)
  } catch (e) {}
  const roots = [workdir, '/opt/autoinstall/task/start']
  const readText = fs.readFileSync  // the guard's own reads (the agent's are checked below)
  const script = /\.(?:[cm]?[jt]sx?)$/
  const named = /(?:\.(?:test|spec)\.[^/]+$)|(?:^test-)|(?:[-_]test\.[^/]+$)/
  const folders = new Set(['test', 'tests', '__tests__', 'spec'])
  const capture = Error.captureStackTrace
  const realpath = fs.realpathSync.native
  function testSource (file) {
    if (typeof file !== 'string' && !(file instanceof URL) && !Buffer.isBuffer(file)) return false
    let full = path.resolve(String(file instanceof URL ? file.pathname : file))
    try { full = realpath(full) } catch (e) {}  // a link to a test is the test
    const root = roots.find((r) => full.startsWith(r + path.sep))
    if (!root || !script.test(full) || taken.has(full)) return false
    const parts = full.slice(root.length + 1).split(path.sep)
    return named.test(parts[parts.length - 1]) || parts.slice(0, -1).some((p) => folders.has(p))
  }
  const prepareFrames = (_, frames) => frames
  function stackFrames () {  // the call stack (then V8's async frames), or null where it cannot be read as frames
    const limit = Error.stackTraceLimit
    const prepare = Error.prepareStackTrace
    const holder = {}
    try {
      Error.stackTraceLimit = Infinity
      Error.prepareStackTrace = prepareFrames
      capture(holder)
      const frames = holder.stack
      return Array.isArray(frames) ? frames : null
    } catch (e) {
      return null
    } finally {
      try { Error.stackTraceLimit = limit; Error.prepareStackTrace = prepare } catch (e) {}
    }
  }
  const fileOf = (frame) => { const name = frame.getFileName(); return name && name.startsWith('file://') ? name.slice(7) : name }
  const agents = (frame) => taken.has(fileOf(frame))
  const tests = (frame) => { const name = fileOf(frame); return !!name && name.startsWith('/') && testSource(name) }
  // The agent's code hands work on: a promise's reaction, a timer, an immediate, a tick, a queued microtask, an fs
  // callback, a stream's step. What runs then is as often a builtin or a library's function as the agent's own
  // (`Promise.resolve(file).then(fs.readFileSync)`, `setTimeout(fs.readFile, 0, file, cb)`), with no frame of the
  // agent's on the stack. So every async resource created while the agent's code is on the stack, or while a
  // resource so marked runs (a timer set from such a promise's reaction), is the agent's, and what runs in it
  // reads no test's source, unless a test's own code is on the stack (a test the product calls back may load its
  // helpers). A capture of the stack costs tens of microseconds and a run creates promises by the hundred
  // thousand, so a promise's job whose lowest frame (beneath it only the microtask queue's) is the agent's marks
  // all it creates without another capture.
  const hooks = require('async_hooks')
  const current = hooks.executionAsyncResource
  const marked = (function markings () {
    // a private field stamped on the resource: invisible to the agent's code, cheaper than a WeakSet (whose
    // entries cost the collector), and nothing to chain; where the engine cannot test for one (`#x in o`, Node
    // 16.4), a WeakSet
    try {
      return eval(`(class Mark extends class { constructor (resource) { return resource } } {
        #agents = true
        static has (resource) { return resource !== null && typeof resource === 'object' && #agents in resource }
        static add (resource) { try { new Mark(resource) } catch (e) {} }
      })`)  // eslint-disable-line no-eval
    } catch (e) {
      return new WeakSet()
    }
  })()
  const queue = 'node:internal/process/task_queues'
  let agentsJob = null  // a promise whose job had the agent's code at its bottom: all created while it runs is the agent's
  function agentsResource () {
    const here = current()
    if (here === agentsJob || marked.has(here)) return true
    const frames = stackFrames()
    if (!frames) return true
    let lowest = 0  // 1: an agent's frame with nothing but the microtask queue's beneath it so far; 2: above another's
    for (const frame of frames) {
      if (frame.isAsync()) {
        if (lowest) break
        if (agents(frame)) return true
      } else if (agents(frame)) {
        lowest = 1
      } else if (lowest === 1 && fileOf(frame) !== queue) {
        lowest = 2
      }
    }
    if (lowest === 1 && here instanceof Promise) agentsJob = here
    return lowest > 0
  }
  const threads = require('worker_threads')
  const agentWorker = 'AUTOINSTALL_GUARD_AGENT_WORKER'
  const inAgentsWorker = !threads.isMainThread && process.env[agentWorker] === '1'
  if (!inAgentsWorker) {
    hooks.createHook({
      init (id, type, trigger, resource) { if (agentsResource()) marked.add(resource) },
    }).enable()
  }
  // A worker thread the agent's code starts (from any script: a library's, or code given with `eval: true`) is
  // the agent's throughout: its guard refuses every test's source. Its environment carries the mark, which the
  // guard reads before any of the worker's code runs; Worker is replaced by a function that reaches the original
  // class through this closure alone.
  const Original = threads.Worker
  function Worker (file, options) {
    if (!new.target) return Original(file, options)  // the class's own error
    if (inAgentsWorker || agentsResource()) {
      const given = options && options.env
      const env = given === undefined || given === threads.SHARE_ENV ? process.env : given
      options = { ...options, env: { ...env, [agentWorker]: '1' } }
    }
    return Reflect.construct(Original, [file, options], new.target === Worker ? Original : new.target)
  }
  Object.setPrototypeOf(Worker, Object.getPrototypeOf(Original))
  Worker.prototype = Original.prototype
  Object.defineProperty(Original.prototype, 'constructor', { value: Worker, writable: true, configurable: true })
  threads.Worker = Worker
  function agentsRead () {  // a test's source read now would be the agent's doing
    if (inAgentsWorker) return true
    const frames = stackFrames()
    if (!frames || frames.some(agents)) return true
    return marked.has(current()) && !frames.some(tests)  // a test's own code may read its helpers
  }
  function refused (file) {
    const text = `autoinstall-guard: refused the agent's code reading a test's source (${file})`
    try { fs.writeSync(2, text + '\n') } catch (e) {}
    const error = new Error(text)
    error.code = 'EACCES'
    return error
  }
  function guarded (owner, name, async) {
    const original = owner[name]
    if (typeof original !== 'function') return
    const wrapper = function (file, ...rest) {
      if (testSource(file) && agentsRead()) {
        const error = refused(file)
        if (async === 'promise') return Promise.reject(error)
        const callback = rest[rest.length - 1]
        if (async === 'callback' && typeof callback === 'function') { process.nextTick(callback, error); return }
        throw error
      }
      return original.call(this, file, ...rest)
    }
    owner[name] = wrapper  // assignable still: a test may stub fs (the original stays the guard's alone)
  }
  const sync = ['readFileSync', 'openSync', 'createReadStream', 'copyFileSync', 'cpSync', 'linkSync', 'symlinkSync',
    'renameSync']
  const later = ['readFile', 'open', 'copyFile', 'cp', 'link', 'symlink', 'rename']
  for (const name of sync) guarded(fs, name, 'sync')
  for (const name of later) guarded(fs, name, 'callback')
  for (const name of [...later, 'openAsBlob']) guarded(name === 'openAsBlob' ? fs : fs.promises, name, 'promise')
  // The processes the agent's code starts read no test either: a child started with the agent's code on the stack
  // (or in work it handed on) runs under the grader's launcher (autoinstall_guard_handoffs.py beside this file:
  // Landlock lets it, and all it starts, read every file but the tests' sources, the task's start copies and the
  // workdir's .git): `cat` of a test file, `git show HEAD:` of one, a node script. Every way child_process starts
  // a process goes through ChildProcess.prototype.spawn (spawn, exec, execFile, fork) or one of its three sync
  // functions. Without python3 or the launcher beside this file, such a start is refused.
  const cp = require('child_process')
  const launcher = path.join(__dirname, 'autoinstall_guard_handoffs.py')
  const python = ['/usr/bin/python3', '/usr/local/bin/python3', '/opt/venv/bin/python3'].find((p) => {
    try { fs.accessSync(p, fs.constants.X_OK); return true } catch (e) { return false }
  })
  function confined (file) {  // the launcher's argv (python first) that runs `file` confined, or a refusal
    if (!python || !fs.existsSync(launcher)) {
      const text = `autoinstall-guard: refused a process the agent's code started (${file}): nothing here confines it`
      try { fs.writeSync(2, text + '\n') } catch (e) {}
      throw Object.assign(new Error(text), { code: 'EACCES' })
    }
    return [python, '-I', '-S', launcher, 'node', workdir, '--', file]
  }
  const spawn = cp.ChildProcess.prototype.spawn
  cp.ChildProcess.prototype.spawn = function (options) {
    if (options && typeof options.file === 'string' && agentsRead()) {
      const rest = Array.isArray(options.args) ? options.args.slice(1) : []
      options = { ...options, file: python, args: [...confined(options.file), ...rest] }
    }
    return spawn.call(this, options)
  }
  const starts = { spawnSync: cp.spawnSync, execFileSync: cp.execFileSync, execSync: cp.execSync }
  for (const name of ['spawnSync', 'execFileSync']) {
    cp[name] = function (file, args, options) {
      if (typeof file !== 'string' || !agentsRead()) return starts[name].apply(this, arguments)
      if (!Array.isArray(args)) { options = args; args = [] }
      return starts[name].call(this, python, [...confined(file).slice(1), ...args], options)
    }
  }
  cp.execSync = function (command, options) {
    if (typeof command !== 'string' || !agentsRead()) return starts.execSync.apply(this, arguments)
    const shell = options && typeof options.shell === 'string' ? options.shell : '/bin/sh'
    return starts.execFileSync.call(this, python, [...confined(shell).slice(1), '-c', command], options)
  }
  // A test's source reaches the agent's code without a read as well: the text of a test's function (runners hold
  // them, as jest's state does; a sloppy caller is `add.caller`; a stack frame's getFunction()) through
  // Function.prototype.toString, and every loaded script's source through an inspector session
  // (Debugger.getScriptSource). With the agent's code on the stack, a function's text that a test file holds is
  // refused, in this realm and in every context made through vm's functions (jest runs its tests in one), and so
  // is an inspector session.
  let testTexts = null
  function testsHold (text) {
    if (testTexts === null) {
      testTexts = []
      const walk = (folder, depth) => {
        let entries = []
        try { entries = fs.readdirSync(folder, { withFileTypes: true }) } catch (e) {}
        for (const entry of entries) {
          const full = path.join(folder, entry.name)
          if (entry.isDirectory() && depth < 12 && entry.name !== 'node_modules' && entry.name !== '.git') walk(full, depth + 1)
          else if (entry.isFile() && testSource(full) && testTexts.length < 5000) testTexts.push(readText(full, 'utf8'))
        }
      }
      walk(workdir, 0)
    }
    return testTexts.some((t) => t.includes(text))
  }
  function guardSource (prototype, sourceOf) {
    const toString = { toString () {
      const text = sourceOf.call(this)
      if (text.length > 7 && !text.endsWith('[native code] }') && agentsRead() && testsHold(text)) {
        throw refused(`a test's function: ${text.slice(0, 60)}`)
      }
      return text
    } }.toString
    Object.defineProperty(prototype, 'toString', { value: toString, writable: true, configurable: true })
  }
  guardSource(Function.prototype, Function.prototype.toString)
  const vm = require('vm')
  const makeContext = vm.createContext
  vm.createContext = function createContext (...args) {
    const context = makeContext.apply(this, args)
    try { guardSource(vm.runInContext('Function.prototype', context), vm.runInContext('Function.prototype.toString', context)) } catch (e) {}
    return context
  }
  vm.Script.prototype.runInNewContext = function runInNewContext (contextObject, options) {
    const o = options && typeof options === 'object' ? options : {}
    const made = vm.createContext(contextObject, { name: o.contextName, origin: o.contextOrigin,
      codeGeneration: o.contextCodeGeneration, microtaskMode: o.microtaskMode })
    return this.runInContext(made, options)
  }
  vm.runInNewContext = function runInNewContext (code, contextObject, options) {
    const o = typeof options === 'string' ? { filename: options } : options
    return new vm.Script(code, o).runInNewContext(contextObject, o)
  }
  try {
    const { Session } = require('inspector')
    for (const name of ['connect', 'connectToMainThread']) {
      const original = Session.prototype[name]
      if (typeof original !== 'function') continue
      Session.prototype[name] = function (...args) {
        if (agentsRead()) throw refused('an inspector session (every script\'s source)')
        return original.apply(this, args)
      }
    }
  } catch (e) {}  // a node without the inspector
  try { require('module').syncBuiltinESMExports() } catch (e) {}
})()
