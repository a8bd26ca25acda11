"""What of a Rust task belongs to the task: integration tests, benches, examples, manifests and lock file,
build scripts (they run before the tests compile), cargo's configuration, vendored crates, the toolchain
file, build output, and the `#[cfg(test)]`/`#[test]` items inside source files (the agent's change to the code
around them is kept)."""
from __future__ import annotations

from autoinstall.ecosystems.grading import rules
from envs.grading.policy import GradingRules

RULES = rules(GradingRules(
    code=[".rs"],
    protected=["**/benches/**", "**/examples/**", "**/Cargo.toml", "**/Cargo.lock", "**/build.rs",
               "**/.cargo/**", "**/rust-toolchain", "**/rust-toolchain.toml", "**/vendor/**", "**/tests.rs"],
    untransferred=["target"],
    inline_tests=["rust"],
    code_checks=["rust"],
    reach=["process::exit", "test result:", " ... ok", "RUST_TEST", "libtest", "set_output_capture",
           # raw memory, linker sections and code run before main
           "unsafe", "link_section", "no_mangle", "ctor", "std::process", "libc::", "env::args", "extern \"C\"",
           # documentation given as an attribute (`#[doc = "..."]`, `cfg_attr(x, doc = ...)`, `include_str!`): its
           # doc tests are ones the grader cannot keep as the start's (envs/grading/kit/doc_tests.py)
           "#[doc=", "#![doc=", ",doc="],
))
