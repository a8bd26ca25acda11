"""An EpisodeBackend over envs/fake.py's FakeSandbox: whole runtime episodes with no Docker.

- the tool server's protocol is answered in this process (`InProcessTools`): file ops by the server's own ops
  (tools/server/) on a scratch folder mirroring the sandbox's in-memory files, commands by the sandbox's exec;
- commands are answered by `behaviour` below: `git apply` (a small unified-diff applier), `head -c` (a file's
  bytes), pytest (the calc project of task_env.py judged from its files, a JUnit report written), and the
  grader kit (the agent's change sorted by the kit's own `changes.find`, the tests run on the mended tree);
- a reset in place puts the image's files back; a fork copies the parent's files into a fresh sandbox.
Nothing of a project runs on this host: the fake "runs" the calc project's tests by reading them.
"""
from __future__ import annotations

import json
import re
import shlex
import tempfile
from pathlib import Path
from typing import Any

from envs.base import ExecResult, Sandbox
from envs.fake import FakeSandbox
from envs.grading.kit import changes
from envs.runtime.backend import Episode
from envs.runtime.grade import TaskGrader, grading_of
from envs.runtime.spec import RuntimeSpec
from envs.task import Task
from tools.server import PROTOCOL_VERSION
from tools.server.files import op_create, op_edit, op_read, op_read_raw
from tools.server.grep import op_search
from tools.server.lint import op_lint
from tools.server.paths import OpError, Workspace
from tools.session import ToolSession

FILE_OPS = {"read": op_read, "read_raw": op_read_raw, "edit": op_edit, "create": op_create, "search": op_search,
            "lint": op_lint}


class InProcessTools:
    """The tool server's answers for a FakeSandbox, as its stream handler."""

    def __init__(self, sandbox: FakeSandbox) -> None:
        self.sandbox = sandbox

    def greeting(self) -> bytes:
        hello = {"server": "autoinstall-toolserver", "protocol": PROTOCOL_VERSION, "root": self.sandbox.workdir}
        return json.dumps({"id": 0, "ok": True, "result": hello}).encode() + b"\n"

    def __call__(self, data: bytes) -> bytes:
        return b"".join(self._answer(json.loads(line)) for line in data.splitlines() if line.strip())

    def _answer(self, request: dict[str, Any]) -> bytes:
        op, args = request["op"], request.get("args") or {}
        try:
            reply = {"id": request["id"], "ok": True, "result": self._run(op, args)}
        except (OpError, OSError, TypeError) as e:
            reply = {"id": request["id"], "ok": False, "error": str(e)}
        return json.dumps(reply).encode() + b"\n"

    def _run(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        if op == "ping":
            return {"pong": True}
        if op == "terminal":
            r = self.sandbox.exec(args["command"], cwd=args.get("cwd"), timeout=args.get("timeout_s"))
            return {"output": r.output, "exit_code": r.exit_code, "timed_out": r.timed_out,
                    "truncated": r.truncated, "duration_s": r.duration_s}
        with tempfile.TemporaryDirectory(prefix="fake-tools-") as tmp:
            root = Path(tmp)
            files = tree(self.sandbox, self.sandbox.workdir)
            write_tree(root, files)
            result = FILE_OPS[op](Workspace(str(root)), **args)
            after = read_tree(root)
        for rel in set(files) - set(after):
            del self.sandbox.files[f"{self.sandbox.workdir}/{rel}"]
        self.sandbox.files.update({f"{self.sandbox.workdir}/{rel}": data for rel, data in after.items()})
        return result


def tree(sandbox: FakeSandbox, folder: str) -> dict[str, bytes]:
    """The sandbox's files under `folder`, by their path inside it."""
    return {k[len(folder) + 1:]: v for k, v in sandbox.files.items() if k.startswith(folder + "/")}


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def apply_diff(files: dict[str, bytes], patch: str) -> bool:
    """A unified diff's hunks applied to `files` (path -> bytes), each hunk where its old lines stand."""
    for part in re.split(r"^diff --git ", patch, flags=re.M)[1:]:
        path = re.search(r"^\+\+\+ b/(\S+)", part, re.M).group(1)  # type: ignore[union-attr]
        text = files.get(path, b"").decode()
        for hunk in re.split(r"^@@.*@@\n", part, flags=re.M)[1:]:
            lines = hunk.splitlines(keepends=True)
            old = "".join(ln[1:] for ln in lines if ln[:1] in (" ", "-"))
            new = "".join(ln[1:] for ln in lines if ln[:1] in (" ", "+"))
            if old not in text:
                return False
            text = text.replace(old, new, 1)
        files[path] = text.encode()
    return True


def run_calc_tests(files: dict[str, bytes], selected: list[str] | None) -> dict[str, str]:
    """test id -> outcome of the calc project's tests (task_env.py), judged from its files as pytest would."""
    functions: dict[str, Any] = {}
    for name, op in re.findall(r"def (\w+)\(a, b\):\n\s+return a ([-+*]) b", files.get("calc.py", b"").decode()):
        functions[name] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}[op]
    outcomes = {}
    for path, data in sorted(files.items()):
        if not re.match(r"tests/test_\w+\.py$", path):
            continue
        for name, check in re.findall(r"def (test_\w+)\(\):\n\s+assert (.+)", data.decode()):
            test_id = f"{path}::{name}"
            if selected and not any(test_id == s or test_id.startswith(s + "::") for s in selected):
                continue
            try:
                outcomes[test_id] = "passed" if eval(check, {"__builtins__": {}}, functions) else "failed"  # noqa: S307
            except Exception:  # noqa: BLE001 - a broken test errors, as under pytest
                outcomes[test_id] = "error"
    return outcomes


def junit(outcomes: dict[str, str]) -> str:
    cases = "".join(
        f'<testcase classname="{t.split("::")[0][:-3].replace("/", ".")}" name="{t.split("::")[1]}" '
        f'file="{t.split("::")[0]}">' + ("" if o == "passed" else '<failure message="assert">boom</failure>')
        + "</testcase>" for t, o in outcomes.items())
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'


def summary(outcomes: dict[str, str]) -> str:
    passed = sum(o == "passed" for o in outcomes.values())
    return f"==== {len(outcomes) - passed} failed, {passed} passed in 0.01s ====\n"


def behaviour(sandbox: FakeSandbox, command: str, env: dict[str, str]) -> ExecResult | None:
    """What the fake sandboxes' commands do (see the module docstring); None: the FakeSandbox's default."""
    if "git apply" in command:
        patch = sandbox.files[re.search(r"git apply \S+ (\S+)", command).group(1)].decode()  # type: ignore[union-attr]
        files = tree(sandbox, sandbox.workdir)
        if not apply_diff(files, patch):
            return ExecResult(exit_code=1, stderr="error: patch failed")
        sandbox.files.update({f"{sandbox.workdir}/{k}": v for k, v in files.items()})
        return ExecResult(exit_code=0)
    if command.startswith("head -c"):
        return ExecResult(exit_code=0, stdout=sandbox.files.get(shlex.split(command)[-1], b"").decode())
    if "--agent" in command and "--out" in command:
        return grade(sandbox, command)
    if "pytest" in command and (report := re.search(r"--junitxml=(\S+)", command)):
        chosen = re.search(r"AUTOINSTALL_SELECT=(\S+);", command)
        selected = sandbox.files[chosen.group(1)].decode().split() if chosen else None
        outcomes = run_calc_tests(tree(sandbox, sandbox.workdir), selected)
        sandbox.files[report.group(1)] = junit(outcomes).encode()
        failed = any(o != "passed" for o in outcomes.values())
        return ExecResult(exit_code=1 if failed else 0, stdout=summary(outcomes))
    return None


def grade(grader: FakeSandbox, command: str) -> ExecResult:
    """The kit's grade in the grading sandbox: the agent's change sorted by `changes.find` under the task's
    rules, what it keeps applied to the start state, the selected tests run there, results.json written."""
    args = shlex.split(command)
    agent, out = args[args.index("--agent") + 1], args[args.index("--out") + 1]
    policy = json.loads(grader.files["/grading/policy.json"])
    start = tree(grader, grader.workdir)
    with tempfile.TemporaryDirectory(prefix="fake-kit-") as tmp:
        write_tree(Path(tmp, "start"), start)
        write_tree(Path(tmp, "agent"), tree(grader, agent))
        found = changes.find(f"{tmp}/start", f"{tmp}/agent", changes.Policy.from_json(policy))
        mended = dict(start)
        for change in (c for c in found if c.accepted):
            if change.kind == "deleted":
                mended.pop(change.path, None)
            else:
                mended[change.path] = change.content or Path(tmp, "agent", change.path).read_bytes()
    outcomes = run_calc_tests(mended, policy["selected"])
    tests = {t: outcomes.get(t, "missing") for t in policy["selected"]}
    results = {"reward": 1.0 if all(o == "passed" for o in tests.values()) else 0.0, "tests": tests,
               "problems": [], "exit_code": 0, "dropped": [{"path": c.path, "reason": c.reason}
                                                           for c in found if not c.accepted]}
    grader.files[f"{out}/results.json"] = json.dumps(results).encode()
    read_back = "head -c " in command and f"{out}/results.json" in command  # the runtime's one command
    return ExecResult(exit_code=0, stdout=json.dumps(results) if read_back else "")


class FakeBackend:
    """Episodes on FakeSandboxes holding `image` (path in the workdir -> text); counts what it started."""

    def __init__(self, image: dict[str, str]) -> None:
        self.image = {k: v.encode() for k, v in image.items()}
        self.started: list[FakeSandbox] = []

    def _sandbox(self, spec: RuntimeSpec, files: dict[str, bytes]) -> FakeSandbox:
        sandbox = FakeSandbox(workdir=spec.workdir, behaviour=behaviour)
        sandbox.stream_handler = InProcessTools(sandbox)
        sandbox.stream_greeting = sandbox.stream_handler.greeting()
        sandbox.files = {f"{spec.workdir}/{k}": v for k, v in files.items()}
        self.started.append(sandbox.start())
        return sandbox

    def _episode(self, sandbox: FakeSandbox, call_timeout: float, terminal: str) -> Episode:
        return sandbox, ToolSession(sandbox, call_timeout=call_timeout, terminal=terminal).start()

    def start(self, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float, terminal: str) -> Episode:
        return self._episode(self._sandbox(spec, self.image), call_timeout, terminal)

    def end(self, episode: Episode | None) -> None:
        if episode is not None:
            episode[1].close()
            episode[0].stop()

    def container_id(self, sandbox: Sandbox) -> str | None:
        return f"fake-{self.started.index(sandbox)}"  # type: ignore[arg-type]

    def prepare_reset(self, spec: RuntimeSpec, labels: dict[str, str]) -> object | None:
        return {f"{spec.workdir}/{k}": v for k, v in self.image.items()}

    def reset_in_place(self, episode: Episode, prepared: object) -> bool:
        episode[0].files = dict(prepared)  # type: ignore[attr-defined, call-overload]
        return True

    def release(self, spec: RuntimeSpec, labels: dict[str, str]) -> None:
        pass

    def can_copy(self, episode: Episode) -> bool:
        return True

    def copy(self, parent: Episode, fresh: Episode) -> bool:
        fresh[0].files = dict(parent[0].files)  # type: ignore[attr-defined]
        return True

    def fork(self, episode: Episode, spec: RuntimeSpec, labels: dict[str, str], call_timeout: float,
             terminal: str) -> Episode:
        return self._episode(self._sandbox(spec, tree(episode[0], spec.workdir)), call_timeout, terminal)  # type: ignore[arg-type]

    def grader(self, task: Task, spec: RuntimeSpec, labels: dict[str, str]) -> TaskGrader:
        grading = grading_of(task)

        def start() -> Sandbox:
            files = dict(self.image)
            assert apply_diff(files, task.bug_patch), "the task's bug does not apply to the fake image"
            sandbox = self._sandbox(spec, files)
            sandbox.files["/grading/policy.json"] = json.dumps(grading.policy()).encode()
            return sandbox

        def carry(agent: Sandbox, src: str, grader: Sandbox, dest: str, keep: object, cap: int) -> tuple[int, list]:
            name = Path(src).name
            files = tree(agent, src)  # type: ignore[arg-type]
            grader.files.update({f"{dest}/{name}/{k}": v for k, v in files.items()})  # type: ignore[attr-defined]
            return sum(map(len, files.values())), []

        return TaskGrader(task, start, carry)
