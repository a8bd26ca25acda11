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
// With the agent's code on the stack (a file the grader took from it: taken.txt, beside this file), reading a
// test's source is refused: a script under a test/, tests/, __tests__ or spec/ folder, or named *.test.*, *.spec.*,
// test-*, *-test.* or *_test.*, in the workdir or among the task's start copies. Data files stay readable.
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
  const roots = [process.cwd(), '/opt/autoinstall/task/start']
  const script = /\.(?:[cm]?[jt]sx?)$/
  const named = /(?:\.(?:test|spec)\.[^/]+$)|(?:^test-)|(?:[-_]test\.[^/]+$)/
  const folders = new Set(['test', 'tests', '__tests__', 'spec'])
  const capture = Error.captureStackTrace
  const realpath = fs.realpathSync
  function testSource (file) {
    if (typeof file !== 'string' && !(file instanceof URL) && !Buffer.isBuffer(file)) return false
    let full = path.resolve(String(file instanceof URL ? file.pathname : file))
    try { full = realpath(full) } catch (e) {}  // a link to a test is the test
    const root = roots.find((r) => full.startsWith(r + path.sep))
    if (!root || !script.test(full) || taken.has(full)) return false
    const parts = full.slice(root.length + 1).split(path.sep)
    return named.test(parts[parts.length - 1]) || parts.slice(0, -1).some((p) => folders.has(p))
  }
  function agentOnStack () {
    const limit = Error.stackTraceLimit
    const prepare = Error.prepareStackTrace
    const holder = {}
    try {
      Error.stackTraceLimit = Infinity
      Error.prepareStackTrace = (_, frames) => frames
      capture(holder)
      const frames = holder.stack
      if (!Array.isArray(frames)) return true  // the stack could not be read as frames: not the guard's to trust
      return frames.some((f) => { const name = f.getFileName(); return !!name && taken.has(name.replace(/^file:\/\//, '')) })
    } catch (e) {
      return true
    } finally {
      try { Error.stackTraceLimit = limit; Error.prepareStackTrace = prepare } catch (e) {}
    }
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
      if (testSource(file) && agentOnStack()) {
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
  try { require('module').syncBuiltinESMExports() } catch (e) {}
})()
