"""Which tests reach a change, by the call graph (codeindex.py), for suites without a per-test call map
(every runner but pytest): the same questions coverage.CoverageMap answers, in every language.

From the changed functions, the callers are followed backwards (by name, MAX_DISTANCE calls at most); a test
whose function is among them reaches the change. A method called implicitly (Python's `__init__`, `__eq__`,
...) is reached through its class's name; one an operator dispatches to (Rust's `eq` by `==`, `partial_cmp` by
`<`, `fmt` by `format!`, `add` by `+`: the grammar's `implicit_calls`) through the operator, in any function
that uses it. A Rust doc test is the code block its id names (doctests.py). A test the index cannot place, and
every test when the change is outside any function (a module-level table), counts as reaching it: the
selection may be too wide, never too narrow by what the graph knows.
"""
from __future__ import annotations

from autoinstall.tasks.candidate import Candidate
from autoinstall.tasks.codeindex import MAX_DISTANCE, CodeIndex, Function
from autoinstall.tasks.difficulty import changed_functions


class StaticReach:
    """Test id -> its test function, and the callers of every name."""

    def __init__(self, index: CodeIndex, passing: list[str]) -> None:
        self.index = index
        self.passing = list(passing)
        self.tests = {t: index.test_function(t) for t in passing}
        self.callers: dict[str, list[Function]] = {}
        for function in index.functions:
            for name in function.refs:
                self.callers.setdefault(name, []).append(function)

    def reaching(self, candidate: Candidate) -> list[str]:
        known = {f.key for f in self.index.functions}
        targets = set(changed_functions(candidate, self.index)) & known
        if not targets:
            return list(self.passing)
        reached = self._callers_of(targets)
        touched = tuple(f"{f}::" for f in candidate.test_files)
        return sorted(t for t, test in self.tests.items()
                      if test is None or test.key in reached or (touched and t.startswith(touched)))

    def selection(self, candidate: Candidate) -> list[str] | None:
        return self.reaching(candidate)

    def _callers_of(self, targets: set[str]) -> set[str]:
        """Keys of the functions that reach one of `targets` within MAX_DISTANCE calls."""
        by_key = {f.key: f for f in self.index.functions}
        frontier = [by_key[k] for k in targets if k in by_key]
        reached: set[str] = set()
        for _ in range(MAX_DISTANCE):
            names = {n for f in frontier for n in f.called_as()}
            frontier = [c for n in names for c in self.callers.get(n, ()) if c.key not in reached]
            reached.update(c.key for c in frontier)
            if not frontier:
                break
        return reached
