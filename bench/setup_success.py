"""How many repositories end verified, against a naive baseline measured in the same run.

    uv run python bench/setup_success.py [REPO ...]      # default: the dev repos fetched under /work/.mirror

For each repository: `autoinstall` (embedded model) -> verified or failure class, tests passed/failed, wall
time; then the naive baseline in a fresh base-image container: `pip install -e .[test]` then `pytest`
(runnable = at least one test passed). The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autoinstall.options import BuildOptions  # noqa: E402
from autoinstall.pipeline import build_environment  # noqa: E402
from autoinstall.source.checkout import prepare_source  # noqa: E402
from envs.baseimage import ensure_base_image  # noqa: E402
from envs.docker import DockerSandbox, DockerSandboxConfig  # noqa: E402
from envs.testrun import parse_summary  # noqa: E402

DEV_REPOS = ["pallets+jinja", "pallets+markupsafe", "GrahamDumpleton+wrapt", "testing-cabal+testtools",
             "cherrypy+cheroot", "giampaolo+pyftpdlib", "wolph+python-progressbar", "amperser+proselint",
             "simplejson+simplejson", "andialbrecht+sqlparse", "pyparsing+pyparsing", "psycopg+psycopg2"]
NAIVE = "pip install -q -e '.[test]' || pip install -q -e .; pip install -q pytest; python -m pytest -q -p no:cacheprovider"


def run_tool(repo: str, out: Path) -> dict:
    started = time.monotonic()
    try:
        spec = build_environment(repo, BuildOptions(out_dir=out))
    except Exception as e:  # noqa: BLE001 - a bench records every failure and goes on
        return {"status": "failed", "failure_class": type(e).__name__, "passed": 0, "failed": 0,
                "wall_s": round(time.monotonic() - started, 1), "message": str(e)[:200]}
    run = spec.verification.last_run if spec.verification else None
    counts = run.counts if run else {}
    return {"status": spec.status, "failure_class": spec.failure.failure_class if spec.failure else None,
            "passed": counts.get("passed", 0), "failed": counts.get("failed", 0) + counts.get("error", 0),
            "wall_s": round(time.monotonic() - started, 1), "repairs": sum(1 for e in spec.log if e.repair),
            "message": spec.failure.message[:200] if spec.failure else ""}


def run_naive(repo: str, scratch: Path) -> dict:
    started = time.monotonic()
    src = scratch / "naive"
    prepare_source(repo, None, src)
    with DockerSandbox(DockerSandboxConfig(image=ensure_base_image("3.11"))) as sandbox:
        sandbox.put(src, sandbox.workdir)
        result = sandbox.exec(NAIVE, timeout=900)
    counts = parse_summary(result.output)
    return {"runnable": counts["passed"] > 0, "passed": counts["passed"],
            "failed": counts["failed"] + counts["error"], "wall_s": round(time.monotonic() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*")
    parser.add_argument("--no-naive", action="store_true", help="skip the baseline")
    args = parser.parse_args()
    repos = args.repos or [str(p) for name in DEV_REPOS if (p := Path("/work/.mirror") / name / "repo").exists()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        for i, repo in enumerate(repos):
            tool = run_tool(repo, Path(tmp) / f"env{i}")
            naive = {} if args.no_naive else run_naive(repo, Path(tmp) / f"n{i}")
            row = {"repo": repo.split("/")[-2] if repo.endswith("/repo") else repo, **tool,
                   "naive": naive}
            rows.append(row)
            print(f"{row['repo']:32} {tool['status']:9} {tool['failure_class'] or '':18} "
                  f"passed={tool['passed']:5} failed={tool['failed']:4} wall={tool['wall_s']:6.1f}s  "
                  f"naive: {'runnable' if naive.get('runnable') else 'not runnable':12} "
                  f"passed={naive.get('passed', 0)} wall={naive.get('wall_s', 0)}s  {tool['message'][:80]}",
                  flush=True)
    walls = [r["wall_s"] for r in rows]
    summary = {"repos": len(rows), "verified": sum(r["status"] == "verified" for r in rows),
               "naive_runnable": sum(bool(r["naive"].get("runnable")) for r in rows),
               "median_wall_s": round(statistics.median(walls), 1) if walls else 0,
               "naive_median_wall_s": round(statistics.median([r["naive"]["wall_s"] for r in rows]), 1)
               if rows and not args.no_naive else None,
               "failures": {r["repo"]: r["failure_class"] for r in rows if r["status"] != "verified"},
               "per_repo": [{k: r[k] for k in ("repo", "status", "failure_class", "passed", "failed", "wall_s")}
                            for r in rows]}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
