"""How many repositories end verified, against a naive baseline measured in the same run.

    uv run python bench/setup_success.py [REPO ...]      # default: the dev repos fetched under /work/.mirror
    uv run python bench/setup_success.py --old           # dev repos pinned at commits 2-4 years old (OLD_REPOS)
    uv run python bench/setup_success.py --language all  # every language's dev repos (LANGUAGE_REPOS), by language

For each repository: `autoinstall` (embedded model, --rebuild-check unless --no-rebuild-check) -> verified,
partial or failed with its class; the suite's size (default collection, selected, deselected), the tests
that passed in every run, failed, errored, skipped, flaky, stubs, the threshold and cap, repairs, wall time
(the counts as every surface has them: envs/catalog_record.py). A dev repository that is not fetched counts
as a failure (`missing`); `verified_over_cap` names any row verified with more deselected than its cap. Then the
naive baseline (bench/naive.py): the language's one-liner (`pytest`, `go test ./...`, `cargo test`, `npm test`,
`mvn test`) in a fresh container of its Debian toolchain, the network on; `naive_runnable` by language too.
With --compare-shared-cache each repository is built a second time the way builds ran before the cache was
layered (one read-write cache for every sandbox), and both medians are reported. The last line is one JSON object.
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

from autoinstall.options import BuildOptions, docker_factory  # noqa: E402
from autoinstall.pipeline import build_environment  # noqa: E402
from envs.baseimage import ensure_base_image  # noqa: E402
from envs.catalog_record import SuiteCounts  # noqa: E402
from envs.docker import DockerFactory, DockerSandbox  # noqa: E402
from envs.home import cache_dir  # noqa: E402
from envs.spec import EnvSpec  # noqa: E402

from bench.naive import run_naive  # noqa: E402

DEV_REPOS = ["pallets+jinja", "pallets+markupsafe", "GrahamDumpleton+wrapt", "testing-cabal+testtools",
             "cherrypy+cheroot", "giampaolo+pyftpdlib", "wolph+python-progressbar", "amperser+proselint",
             "simplejson+simplejson", "andialbrecht+sqlparse", "pyparsing+pyparsing", "psycopg+psycopg2"]
OLD_REPOS = {"andialbrecht+sqlparse": "8b789f286e1b6cbf05c15020ea7544cb7f02f8f7",     # 2022-12-30
             "pyparsing+pyparsing": "318ec7e3b945068d36f5c98b1de81003c773c6c4",       # 2022-12-22
             "wolph+python-progressbar": "19795af6a0c9fc3774cc05982ecefb7936107d3f",  # 2022-11-01
             "testing-cabal+testtools": "40bf9848dae464d69dce302123d2bc99ed402cdb"}   # 2022-12-27
"""Old commits: their dependencies resolve as of the commit date (the time machine, recorded per row)."""
LANGUAGE_REPOS = {
    "python": dict.fromkeys(DEV_REPOS),
    "go": {"google+uuid": "2d3c2a9cc518", "go-chi+chi": "735ae2b87f8c", "pelletier+go-toml": "86608d7fca88",
           "fatih+color": "53d4ce9d5df3"},
    "rust": {"rust-lang+log": "037d7a58f6ad", "dtolnay+thiserror": "aa9d91f75302", "hyperium+http": "82db5b8af1e3"},
    "node": {"npm+node-semver": "6e05b7637396", "jshttp+mime-types": "3a1187ee2138",
             "pillarjs+path-to-regexp": "cbf30259e6d3", "lukeed+kleur": "fa3454483899"},
    "java": {"square+javapoet": "b9017a9503b7", "FasterXML+jackson-core": "b367da1c30a2"},
}
"""The dev set of ../shared/dev-repos.md by language, each at its listed commit (None: the mirror's HEAD)."""
CLASS_REPOS = {
    "go": {"golang+sync": ("ec11c4a93de2", "toolchain: go directive 1.25.0, newer than Debian's Go 1.24"),
           "stretchr+testify": ("12f8b5612e12", "nested suites: tests that run suites print --- FAIL lines")},
    "rust": {"sharkdp+fd": ("ee20f426ddf3", "toolchain: rust-version 1.90, edition 2024, Cargo.lock"),
             "dtolnay+anyhow": ("1dbe1862aae6", "toolchain: no Cargo.lock, dev-dependency graph needs newer rustc")},
    "node": {"sindresorhus+ky": ("3419113b48e0", "toolchain: engines node >=22, newer than Debian's Node 20"),
             "isaacs+node-glob": ("e80cb38ae60d", "install scripts: esbuild's postinstall, a prepare build, tap's graph")},
    "java": {"google+gson": ("9835b6f90192", "multi-module Maven: the proto module's protoc plugin cannot be "
                                             "loaded by Debian's Maven (Apache's loads it)"),
             "jline+jline3": ("47566b51b563", "toolchain: the enforcer requires JDK 22 to build (Debian has 21); "
                                              "a module's plugin no reachable repository serves; Swing tests "
                                              "that need fonts")},
}
"""Dev repositories added for issue #23, each at a commit, each for the class of failure it exercises."""
for _language, _repos in CLASS_REPOS.items():
    LANGUAGE_REPOS[_language].update({name: commit for name, (commit, _) in _repos.items()})
CLASS_OF = {name: why.split(":")[0] for repos in CLASS_REPOS.values() for name, (_, why) in repos.items()}
"""The class a repository exercises, shown in its bench row (None for the older dev set)."""


class SharedCacheFactory(DockerFactory):
    """Builds as they ran before the layered cache: every sandbox writes into the one shared cache."""

    def sandbox(self, image: str, *, network: bool, env: dict[str, str] | None = None, cache: bool = False,
                trusted: bool = False) -> DockerSandbox:
        return super().sandbox(image, network=network, env=env, cache=cache, trusted=cache or trusted)


def run_tool(repo: str, out: Path, rebuild_check: bool, shared_cache: bool = False,
             commit: str | None = None) -> dict:
    started = time.monotonic()
    factory = (SharedCacheFactory(None, cache_dir(), ensure_base_image) if shared_cache
               else docker_factory())
    try:
        spec = build_environment(repo, BuildOptions(out_dir=out, rebuild_check=rebuild_check, commit=commit),
                                 factory=factory)
    except Exception as e:  # noqa: BLE001 - a bench records every failure and goes on
        return {**EMPTY, "status": "failed", "failure_class": type(e).__name__,
                "wall_s": round(time.monotonic() - started, 1), "message": str(e)[:200]}
    return {**tool_row(spec), "wall_s": round(time.monotonic() - started, 1)}


def tool_row(spec: EnvSpec) -> dict:
    """A bench row's counts, as every surface has them (envs/catalog_record.py `SuiteCounts`), and its repairs."""
    counts = SuiteCounts.from_spec(spec)
    return {**EMPTY, **counts.model_dump(), "failure_class": spec.failure.failure_class if spec.failure else None,
            "repairs": sum(1 for e in spec.log if e.repair),
            "message": spec.failure.message[:200] if spec.failure else "",
            "dependencies": spec.env.get("AUTOINSTALL_DEPENDENCIES", "latest releases")}


EMPTY = {**SuiteCounts(status="failed").model_dump(), "repairs": 0, "message": ""}
"""The counts of a row that has no spec (a build that raised, a repository not fetched)."""


def missing_row(repo: str, name: str, language: str) -> dict:
    """A dev repository that is not fetched: a row of its own, counted as a failure (never dropped)."""
    return {"repo": name, **EMPTY, "status": "missing", "failure_class": "not_fetched", "language": language,
            "wall_s": 0.0, "naive": {}, "message": f"{repo} is not there: fetch it first"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="*")
    parser.add_argument("--no-naive", action="store_true", help="skip the baseline")
    parser.add_argument("--no-rebuild-check", action="store_true", help="do not rebuild from the Dockerfile")
    parser.add_argument("--compare-shared-cache", action="store_true",
                        help="build each repository again with one read-write cache for every sandbox")
    parser.add_argument("--old", action="store_true", help="the dev repos pinned at old commits (OLD_REPOS)")
    parser.add_argument("--language", choices=[*LANGUAGE_REPOS, "all"],
                        help="the dev repos of one language (or all), at their listed commits")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write each environment (spec.json, logs/) to DIR/<repo> and keep it")
    args = parser.parse_args()
    chosen = (OLD_REPOS if args.old else LANGUAGE_REPOS[args.language] if args.language in LANGUAGE_REPOS
              else {k: v for repos in LANGUAGE_REPOS.values() for k, v in repos.items()} if args.language
              else dict.fromkeys(DEV_REPOS))
    language_of = {str(Path("/work/.mirror") / name / "repo"): lang for lang, repos in LANGUAGE_REPOS.items()
                   for name in repos}
    repos = args.repos or [str(Path("/work/.mirror") / name / "repo") for name in chosen]
    commits = {str(Path("/work/.mirror") / name / "repo"): commit for name, commit in chosen.items() if commit}
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        for i, repo in enumerate(repos):
            name = repo.split("/")[-2] if repo.endswith("/repo") else repo
            if "://" not in repo and not Path(repo).exists():
                rows.append({**missing_row(repo, name, language_of.get(repo, "python")), "class": CLASS_OF.get(name)})
                print(f"{name:32} missing   (fetch it: counted as a failure)", flush=True)
                continue
            out = args.keep / name if args.keep else Path(tmp) / f"env{i}"
            tool = run_tool(repo, out, not args.no_rebuild_check, commit=commits.get(repo))
            shared = (run_tool(repo, Path(tmp) / f"shared{i}", not args.no_rebuild_check, shared_cache=True)
                      if args.compare_shared_cache else {})
            naive = ({} if args.no_naive else
                     run_naive(repo, Path(tmp) / f"n{i}", language_of.get(repo, "python"), commits.get(repo)))
            row = {"repo": name, **tool, "naive": naive, "shared_cache_wall_s": shared.get("wall_s"),
                   "language": language_of.get(repo, "python"), "class": CLASS_OF.get(name)}
            rows.append(row)
            print(f"{row['repo']:28} {tool['status']:8} {tool['failure_class'] or '':16} "
                  f"suite={tool['collected']} sel={tool['selected']} desel={tool['deselected']} "
                  f"passed={tool['passed']} failed={tool['failed']} errors={tool['errors']} skipped={tool['skipped']} "
                  f"flaky={tool['flaky']} stubs={tool['stubs']} wall={tool['wall_s']:.1f}s"
                  + (f" (shared cache {shared['wall_s']:.1f}s)" if shared else "")
                  + (f"  naive: {'runnable' if naive.get('runnable') else 'not runnable'} "
                     f"passed={naive.get('passed', 0)} wall={naive.get('wall_s', 0)}s" if naive else "")
                  + f"  {tool['message'][:80]}", flush=True)
    print(json.dumps(summarize(rows, naive=not args.no_naive)))


ROW_KEYS = ("repo", "status", "failure_class", "collected", "selected", "deselected", "deselections", "passed",
            "failed", "errors", "skipped", "flaky", "stubs", "threshold", "max_deselected", "wall_s",
            "shared_cache_wall_s", "dependencies", "language", "class")


def summarize(rows: list[dict], *, naive: bool) -> dict:
    """The last line: verified/partial/missing, every row that is not verified as a failure (missing ones too),
    the rows that say verified with more of their suite deselected than their cap (there should be none), the
    medians, and the rows."""
    walls = [r["wall_s"] for r in rows if r["status"] != "missing"]
    shared_walls = [r["shared_cache_wall_s"] for r in rows if r.get("shared_cache_wall_s") is not None]
    return {"repos": len(rows), "verified": sum(r["status"] == "verified" for r in rows),
            "partial": sum(r["status"] == "partial" for r in rows),
            "missing": sum(r["status"] == "missing" for r in rows),
            "verified_over_cap": [r["repo"] for r in rows if r["status"] == "verified" and over_cap(r)],
            "shared_cache_median_wall_s": round(statistics.median(shared_walls), 1) if shared_walls else None,
            "naive_runnable": sum(bool(r["naive"].get("runnable")) for r in rows) if naive else None,
            "median_wall_s": round(statistics.median(walls), 1) if walls else 0,
            "naive_median_wall_s": round(statistics.median([r["naive"]["wall_s"] for r in rows if r["naive"]]), 1)
            if walls and naive else None,
            "failures": {r["repo"]: r["failure_class"] for r in rows if r["status"] != "verified"},
            "by_language": by_language(rows),
            "per_repo": [{k: r.get(k) for k in ROW_KEYS} for r in rows]}


def over_cap(row: dict) -> bool:
    """More of the suite deselected than the row's cap allows."""
    suite, selected = row.get("collected"), row.get("selected")
    if not suite or selected is None:
        return False
    return 1 - selected / suite > (row.get("max_deselected") or 0.05)


def by_language(rows: list[dict]) -> dict[str, dict]:
    """Per language: repos, verified, partial, the median wall of those that ran, and the naive one-liner's runnable
    count (bench/naive.py)."""
    out: dict[str, dict] = {}
    for lang in dict.fromkeys(r["language"] for r in rows):
        mine = [r for r in rows if r["language"] == lang]
        walls = [r["wall_s"] for r in mine if r["status"] != "missing"]
        out[lang] = {"repos": len(mine), "verified": sum(r["status"] == "verified" for r in mine),
                     "partial": sum(r["status"] == "partial" for r in mine),
                     "median_wall_s": round(statistics.median(walls), 1) if walls else None,
                     "naive_runnable": (sum(bool(r["naive"].get("runnable")) for r in mine)
                                        if any(r.get("naive") for r in mine) else None)}
    return out


if __name__ == "__main__":
    main()
