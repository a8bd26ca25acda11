"""The start image's Dockerfile (fast, no Docker): output compiled from the solved state never reaches it."""
from __future__ import annotations

from autoinstall.ecosystems.java.grading import RULES as JAVA_RULES
from autoinstall.ecosystems.python.grading import RULES as PYTHON_RULES
from envs.grading.image import dockerfile, image_tag
from envs.grading.policy import Grading, GradingRun


def test_compiled_folders_are_removed_before_the_start_copy_is_taken() -> None:
    text = dockerfile("env:1", "/workspace", compiled=tuple(JAVA_RULES.compiled))
    removals = [f"find /workspace -path '*/{c}' -type d -prune -exec rm -rf {{}} +"
                for c in ("__pycache__", "target/classes", "target/test-classes")]
    assert all(r in text for r in removals), text
    assert max(text.index(r) for r in removals) < text.index("cp -a /workspace /opt/autoinstall/task/start")
    assert "target/classes" not in dockerfile("env:1", "/workspace", compiled=tuple(PYTHON_RULES.compiled))


def test_the_compiled_rule_is_part_of_the_image_tag() -> None:
    run = GradingRun(command="mvn test", parser="surefire")
    java = Grading(rules=JAVA_RULES, run=run, selected=["a.BTest#c"])
    bare = java.model_copy(update={"rules": JAVA_RULES.model_copy(update={"compiled": []})})
    assert image_tag("t", "env:1", "", java) != image_tag("t", "env:1", "", bare)


def test_a_task_container_stops_at_once() -> None:
    """Its PID 1 (Harbor's `sh -c "sleep infinity"`) ignores SIGTERM: without this, every `docker stop` of a
    trial's containers waits out the 10 s grace period."""
    assert "\nSTOPSIGNAL SIGKILL\n" in dockerfile("env:1", "/workspace")
