"""What every ecosystem's grading rules share (envs/grading/policy.py GradingRules): the grader's own paths,
the build files that decide what a test command runs, and git's folder; each language adds its own in
autoinstall/ecosystems/<language>/grading.py."""
from __future__ import annotations

from envs.grading.policy import GradingRules

COMMON = GradingRules(
    protected=["**/Makefile", "**/GNUmakefile", "**/makefile", "**/*.mk", "**/justfile", "**/Justfile",
               "**/.justfile", "**/Taskfile.yml", "**/.envrc", "**/.env"],
    untransferred=[".git"],
    reach=["/opt/autoinstall", "/logs/verifier", "AUTOINSTALL_", "autoinstall_", "/var/tmp/autoinstall"],
)
"""A make or just target can be the test command; .env files set its environment; the grader's paths are out
of bounds to product code."""
TEST_FOLDERS = ["test", "tests", "testing", "spec", "specs", "fixtures", "testdata", "__tests__"]
"""Folders of tests and their data in every language (autoinstall/tasks/languages.py never mutates them)."""


def rules(*own: GradingRules) -> GradingRules:
    """COMMON, the shared test folders and a language's own rules."""
    merged = COMMON.merged(GradingRules(protected=[f"**/{name}/**" for name in TEST_FOLDERS]))
    for extra in own:
        merged = merged.merged(extra)
    return merged
