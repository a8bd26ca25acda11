// The guard of a graded Node run (envs/testrun/grading.py loads it into every node process of the run with
// NODE_OPTIONS=--require, before any of the agent's code). In a node:test child (NODE_TEST_CONTEXT, set by the
// runner for the children it starts), the runner never ends the process itself: the child ends when its tests
// are done, and its standard output is the runner's channel. So an explicit exit there is the product's: one
// that writes a recorded passing run to the channel and exits 0 would be graded as passing, however it reached
// `process` (the screens read spellings; `(0, eval)('this')` is the global object in any mode). Both ways to
// exit explicitly (`process.exit` ends in `process.reallyExit`) are replaced, for good, by a refusal: the
// guard's mark on the run's stderr (the runner reports a child's stderr; verdict.py grades the run 0) and
// status 1.
'use strict'
if (process.env.NODE_TEST_CONTEXT) {
  const fs = require('fs')
  const really = process.reallyExit
  const refuse = (name) => function refused () {
    try {
      fs.writeSync(2, `autoinstall-guard: refused process.${name}() in a node:test child (ending it is the runner's)\n`)
    } catch (e) {}
    really.call(process, 1)
  }
  for (const name of ['reallyExit', 'exit']) {
    Object.defineProperty(process, name, { value: refuse(name), writable: false, configurable: false })
  }
}
