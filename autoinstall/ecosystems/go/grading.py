"""What of a Go task belongs to the task: `*_test.go` files and test data, the module files (a replace
directive would swap a dependency), vendored dependencies; product code may not import `testing` or exit the
test binary."""
from __future__ import annotations

from autoinstall.ecosystems.grading import rules
from envs.grading.policy import GradingRules

RULES = rules(GradingRules(
    code=[".go", ".s", ".c", ".h"],
    protected=["**/*_test.go", "**/go.mod", "**/go.sum", "**/go.work", "**/go.work.sum", "**/vendor/**"],
    code_checks=["go"],
    reach=['"testing"', "testing.Testing", "test2json", "os.Exit(0)", "-test.", "flag.Lookup(\"test",
           # memory, linker and process tricks
           "unsafe", "go:linkname", "reflect.", "os.Args", "os.Stdout", "syscall", "runtime.Goexit", "os/exec",
           # cgo's flags: how the compiler reads the C beside Go (-std=c99 turns trigraphs on), what is linked
           "#cgo"],
))
