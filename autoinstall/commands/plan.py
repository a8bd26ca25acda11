"""`autoinstall plan REPO`: phase 1 only, the proposed steps and checks, without Docker."""
from __future__ import annotations

from autoinstall.commands.options import BUILD, BaseUrl, Commit, ForcePython, JsonOut, Model, Repo
from autoinstall.commands.output import out


def plan_cmd(repo: Repo, commit: Commit = None, model: Model = BUILD.model, base_url: BaseUrl = None,
             python: ForcePython = BUILD.python, json_out: JsonOut = False) -> None:
    """Survey REPO and print the proposed plan (phase 1 only, no Docker)."""
    # Imported here: proposing loads git and the survey, which `autoinstall --help` does not need.
    from autoinstall.commands.progress import print_plan
    from autoinstall.commands.run import check_build_options
    from autoinstall.options import BuildOptions
    from autoinstall.plan.propose import propose_plan

    check_build_options(BuildOptions(model=model, base_url=base_url, python=python))
    plan = propose_plan(repo, commit=commit, model=model, base_url=base_url, python=python)
    if json_out:
        out.print_json(plan.model_dump_json())
    else:
        print_plan(out, plan)
