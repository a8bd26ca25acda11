"""A task's grading record (envs/grading/policy.py), made with the task: the ecosystem's rules of what belongs
to the task, the files its test ids name, and the runner's exact grading command, built in the environment's
container (a Node runner reads the package's scripts there)."""
from __future__ import annotations

from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.tasks import patchtext
from autoinstall.tasks.coverage import folder_prefix
from autoinstall.tasks.workspace import QUIET_ENV, Suite
from envs.base import Sandbox
from envs.grading.kit import changes
from envs.grading.kit.globs import first_match
from envs.grading.policy import Grading, GradingRules
from envs.spec import EnvSpec
from envs.testrun import DEFAULT_PER_TEST_TIMEOUT_S
from envs.testrun.grading import grading_run, test_files


def task_rules(spec: EnvSpec, suite: Suite, selected: list[str]) -> GradingRules:
    """What of a task over `selected` belongs to the task: the ecosystem's rules and the files its ids name."""
    rules = get_ecosystem(spec.plan.ecosystem).grading
    inside = folder_prefix(suite.project)
    named = [inside + f for f in test_files(suite.runner, selected)]
    return rules.merged(GradingRules(protected=named)) if named else rules


def gold_problem(rules: GradingRules, files: list[str], gold_patch: str, solved: dict[str, str],
                 bug_patch: str = "") -> str | None:
    """Why the grader would not take the gold patch whole from an agent, or None: it changes a file that
    belongs to the task or is not source, or its added code is refused as the grader refuses an agent's (the
    kit's own judgment, envs/grading/kit/changes.py `content_problem`, from the bug state that `bug_patch` makes
    of `solved` to `solved`; without it, or when it does not apply, the tokens alone). `files`: what the fix
    changes; `solved`: their text in the solved state (a file missing there counts as holding nothing).
    Such a task pays no agent for the fix it asks for, so it is not made."""
    for path in files:
        if pattern := first_match(path, tuple(rules.protected)):
            return f"its fix changes {path}, which belongs to the task ({pattern})"
        if held := next((part for part in path.split("/")[:-1] if part in rules.untransferred), None):
            return f"its fix changes {path}, under {held}/, which the grader never takes from an agent"
        if rules.code and not path.endswith(tuple(rules.code)):
            return f"its fix changes {path}, not a source file, which the grader never takes from an agent"
    policy = changes.Policy.from_json(rules.model_dump(mode="json"))
    bug = patchtext.per_file(bug_patch)
    for path, added, removed in _files_of(gold_patch):
        text = solved.get(path, "")
        start = patchtext.applied(text, bug[path]) if path in bug else None
        if start is not None:
            if why := changes.content_problem(path, start.encode(), text.encode(), policy):
                return f"its fix to {path} is refused as an agent's would be: {why}"
            continue
        for token in rules.reach:
            if token in added and token not in removed and text.count(token) <= added.count(token):
                return f"its fix adds {token!r} to {path}, which the grader refuses in an agent's product code"
    return None


def _files_of(patch: str) -> list[tuple[str, str, str]]:
    """(path, added text, removed text) of each file a -p1 unified diff changes."""
    out: list[tuple[str, list[str], list[str]]] = []
    for line in patch.splitlines():
        if line.startswith("+++ "):
            out.append((line[4:].strip().removeprefix("b/"), [], []))
        elif out and line.startswith("+") and not line.startswith("+++"):
            out[-1][1].append(line[1:])
        elif out and line.startswith("-") and not line.startswith("---"):
            out[-1][2].append(line[1:])
    return [(path, "\n".join(added), "\n".join(removed)) for path, added, removed in out]


def grading_for(spec: EnvSpec, suite: Suite, sandbox: Sandbox, fail_to_pass: list[str], pass_to_pass: list[str],
                timeout_s: float) -> Grading:
    """The grading of a task over FAIL_TO_PASS + PASS_TO_PASS on this environment (the first fail in the start
    state, as its validation saw: the grader scores a tree it takes nothing into without running them).

    Raises:
        NotGradable: the suite's runner names no test.
    """
    selected = [*fail_to_pass, *pass_to_pass]
    rules = task_rules(spec, suite, selected)
    run = grading_run(suite.runner, sandbox, suite.command, suite.deselected, selected,
                      min(DEFAULT_PER_TEST_TIMEOUT_S, timeout_s / 4))
    run = run.model_copy(update={"env": {**suite.env, **QUIET_ENV, **run.env}})
    return Grading(rules=rules, run=run, selected=selected, fail_at_start=list(fail_to_pass), workdir=suite.workdir,
                   timeout_s=max(600.0, timeout_s * 3))
