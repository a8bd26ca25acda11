"""The survey: read what a repository's files say about installing and testing it (nothing is run).

Files: `facts.py` (RepoFacts), `project.py` + `poetry.py` + `setuppy.py`
(build and dependencies), `tasks.py` (tox, nox, hatch), `testing.py` (pytest config, test layout),
`ci.py` + `commands.py` (CI, make, just, poe, docs), `layout.py` (requirements, packages, imports),
`rustbuild.py` (a build that compiles Rust: the companion need, and when Python leads over a root Cargo.toml),
`nodebuild.py` (a build or tests that run Node: the companion need).
Files are read through `autoinstall/ecosystems/repofiles.py` (safe loaders, shared by every ecosystem).
"""

from __future__ import annotations

from pathlib import Path

from autoinstall.ecosystems.python.survey.ci import read_ci_and_tasks
from autoinstall.ecosystems.python.survey.facts import RepoFacts
from autoinstall.ecosystems.python.survey.layout import (
    read_compiled,
    read_imports,
    read_packages,
    read_requirements,
)
from autoinstall.ecosystems.python.survey.project import read_project
from autoinstall.ecosystems.python.survey.nodebuild import read_node_build
from autoinstall.ecosystems.python.survey.rustbuild import read_rust_build
from autoinstall.ecosystems.python.survey.tasks import read_hatch, read_nox, read_tox
from autoinstall.ecosystems.python.survey.testing import read_pytest_config, read_test_layout
from autoinstall.ecosystems.repofiles import RepoFiles, kind_of

__all__ = ["RepoFacts", "survey"]


def survey(repo: Path) -> RepoFacts:
    """Everything the repository's files say, each fact with its evidence; malformed files become notes.

    Args:
        repo: the root of a checkout (never modified, nothing in it is run or imported).

    Returns:
        The facts; `notes` lists files that could not be read and other things worth knowing.

    Raises:
        NotADirectoryError: `repo` is not a directory.
    """
    repo = Path(repo).resolve()
    if not repo.is_dir():
        msg = f"{repo} is not a directory"
        raise NotADirectoryError(msg)
    files = RepoFiles(repo)
    facts = RepoFacts(root=str(repo), has_git=kind_of(repo, repo / ".git") in ("dir", "file"))
    for reader in (read_project, read_requirements, read_tox, read_nox, read_hatch, read_ci_and_tasks):
        files.guarded(reader.__name__, lambda r=reader: r(files, facts))
    local: set[str] = set()
    files.guarded("read_packages", lambda: local.update(read_packages(files, facts)))
    files.guarded("read_pytest_config", lambda: read_pytest_config(files, facts, local))
    files.guarded("read_test_layout", lambda: read_test_layout(files, facts))
    files.guarded("read_imports", lambda: read_imports(files, facts, local))
    files.guarded("read_compiled", lambda: read_compiled(files, facts))
    files.guarded("read_rust_build", lambda: read_rust_build(files, facts))
    files.guarded("read_node_build", lambda: read_node_build(files, facts))
    facts.notes = files.notes + facts.notes
    return facts
