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
