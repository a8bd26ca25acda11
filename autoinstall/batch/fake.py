"""A stand-in for `build_environment` for tests and demos: the repository string says what happens.

`fake://NAME?sleep=0.2&outcome=verified|failed|raise&log=PATH`: sleep (reporting a step every 50 ms),
then return a verified or failed spec (written to out_dir like the pipeline does), or raise an EnvError.
`log` appends NAME to a file, so a test can count the builds that actually ran.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from autoinstall.options import BuildOptions
from envs.errors import EnvError
from envs.spec import Collection, EnvSpec, Failure, Plan, SourceRecord, TestRun, Timings, Verification


def fake_build(repo: str, options: BuildOptions, report: Callable[[str, str], None]) -> EnvSpec:
    """Pretend to build `repo` (see the module docstring for the knobs)."""
    url = urlsplit(repo)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    name = url.netloc or url.path.rsplit("/", 1)[-1] or "fake"
    if "log" in query:
        with Path(query["log"]).open("a") as f:
            f.write(name + "\n")
    report("phase", "install")
    started, sleep = time.monotonic(), float(query.get("sleep", "0.05"))
    while time.monotonic() - started < sleep:
        report("step", f"pip install {name}")
        time.sleep(min(0.05, sleep))
    outcome = query.get("outcome", "verified")
    if outcome == "raise":
        msg = f"fake engine failure while building {name}"
        raise EnvError(msg)
    commit = options.commit or hashlib.sha1(repo.encode()).hexdigest()  # noqa: S324 (a fake commit id)
    verified = outcome == "verified"
    counts = {"passed": 3, "failed": 0 if verified else 2, "skipped": 1}
    run = TestRun(exit_code=0 if verified else 1, counts=counts)
    date = "2024-01-01T00:00:00Z"
    spec = EnvSpec(status="verified" if verified else "failed", model=options.model, plan=Plan(),
                   source=SourceRecord(repo=repo, name=name, commit=commit, commit_date=date),
                   base_image="autoinstall-base:fake", python="3.11",
                   image=f"autoinstall-env/{name}:{commit[:12]}",
                   verification=Verification(verified=verified, runs=[run],
                                             collection=Collection(default=6, command=6, selected=5)),
                   failure=None if verified else Failure(failure_class="tests_failing",
                                                         message="2 tests fail"),
                   timings=Timings(total_s=round(time.monotonic() - started, 3)), created_at=date)
    if options.out_dir is not None:
        options.out_dir.mkdir(parents=True, exist_ok=True)
        (options.out_dir / "spec.json").write_text(spec.model_dump_json(indent=2))
    return spec
