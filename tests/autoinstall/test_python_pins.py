"""The Python pins: what `uv pip freeze` says becomes `name==version` constraints and the trusted cache fill's
list, and nothing else a hostile build could have planted in its venv (option lines, URLs, paths)."""
from __future__ import annotations

from autoinstall.ecosystems.python.pins import WARM_DIR, constraints_from_freeze, warm
from envs.fake import FakeSandbox

FREEZE = ("attrs==25.1.0\n-e file:///workspace\nmyproj==0.1.0\npytest-cov==6.0.0\n"
          "zope.interface[test]==7.2\nlocal @ file:///tmp/local.whl\n# a comment\n"
          "--index-url https://evil.example/simple\n--find-links /workspace/wheels\n-r /workspace/more.txt\n"
          "six==1.17.0 ; python_version < '3'\n")


def test_constraints_keep_only_name_version_pins_and_drop_the_project() -> None:
    assert constraints_from_freeze(FREEZE, "MyProj") == "attrs==25.1.0\npytest-cov==6.0.0\nzope.interface[test]==7.2\n"
    assert constraints_from_freeze("", None) == ""


def test_the_cache_fill_downloads_only_pins_whatever_the_constraints_say() -> None:
    box = FakeSandbox().start()
    warm(box, "attrs==25.1.0\n--index-url https://evil.example/simple\n--no-binary :all:\nsix==1.17.0\n")
    assert box.files[f"{WARM_DIR}.txt"].decode().split("\n") == ["attrs==25.1.0", "six==1.17.0", ""]
    assert "--no-build" in box.commands()[-1]
    quiet = FakeSandbox().start()
    warm(quiet, "--extra-index-url https://evil.example/simple\n")
    assert quiet.commands() == []  # nothing to fetch: no sandbox command at all
