"""The workspace the runtime benchmarks run on: a verified environment of this machine's catalog.

`--env ID` picks one (a catalog id or prefix); by default the verified Python environment with the most
passing tests. The calls made there are picked from its own workspace (bench/mix.py).
"""

from __future__ import annotations

from envs.catalog import Catalog
from envs.runtime import RuntimeSpec


def dev_spec(env_id: str | None) -> tuple[str, RuntimeSpec]:
    """(name, RuntimeSpec) of the chosen verified environment; SystemExit saying what to do when none is."""
    catalog = Catalog()
    if env_id:
        spec = catalog.get_spec(env_id)
        if spec is None:
            raise SystemExit(f"no spec for catalog entry {env_id!r}; see `autoinstall catalog list`")
        return spec.source.name, RuntimeSpec.from_env_spec(spec)
    best = None
    for record in catalog.list(status="verified"):
        spec = catalog.get_spec(record.id)
        if spec is None or not spec.image or spec.plan.ecosystem != "python":
            continue
        passed = spec.verification.last_run.passed if spec.verification and spec.verification.last_run else 0
        if best is None or passed > best[0]:
            best = (passed, spec)
    if best is None:
        raise SystemExit("no verified Python environment in the catalog: build one (`autoinstall build ...`) "
                         "or pass --env ID")
    return best[1].source.name, RuntimeSpec.from_env_spec(best[1])

