"""Node's validations on Docker reuse their containers: a run writes npm's debug log (a neutral cache) and
vitest's results cache (put back as the image had it before the container is looked at), so a container given
back is the next one's, every run reads the image's results cache, and a container a run changed anywhere else is
stopped."""
from __future__ import annotations

import json

import pytest

from autoinstall.options import docker_factory
from autoinstall.tasks.containers import Containers
from autoinstall.tasks.workspace import Suite
from tests.builds import Builds

FIXTURE = "node_vitest"
SOURCE = "src/list.js"
RESULTS = "node_modules/.vite/vitest/results.json"
BUG = "sed -i 's/counts\\[k\\] || 0) + 1/counts[k] || 0) + 2/' src/list.js"
"""A bug the fixture's countBy test fails on (vitest's results cache then records its file as failed)."""


def _failed(cache: bytes) -> list[str]:
    """The test files vitest's results cache records as failed."""
    return [name for name, result in json.loads(cache)["results"] if result.get("failed")]


@pytest.mark.docker
@pytest.mark.slow
def test_node_validations_reuse_their_containers_and_never_a_changed_one(builds: Builds) -> None:
    env = builds.task(FIXTURE).env  # the run's one build of the fixture (its task selection tests' too)
    assert env.spec.status == "verified", env.spec.failure
    suite = Suite.from_spec(env.spec)
    assert suite is not None and env.spec.image
    pool = Containers(docker_factory(), env.spec.image, suite)
    try:
        image_cache = b""
        for bug in (BUG, "true", BUG, "true"):  # a failing run, then clean ones: each reads the image's cache
            with pool.lease([SOURCE]) as (box, restored):
                cache = box.read_file(RESULTS)
                image_cache = image_cache or cache
                assert cache == image_cache and not _failed(cache)
                original = box.read_file(SOURCE)
                assert box.exec(bug, timeout=60).ok
                run = suite.run(box, timeout_s=300)
                assert run.results and (run.counts.get("failed", 0) > 0) == (bug == BUG), run.output_tail
                assert (bug == BUG) == bool(_failed(box.read_file(RESULTS)))  # the run wrote the cache
                box.write_file(SOURCE, original)
                restored()
        assert (pool.started, pool.reused) == (1, 3)
        assert box.exec("ls /root/.npm/_logs", timeout=60).stdout.strip()  # npm's logs were written, and left

        for change in ("echo x > /root/.npm/other",  # beside npm's logs, not in them
                       "echo '// x' >> node_modules/vitest/index.cjs",  # a dependency rewritten
                       "mkdir -p node_modules/.vite/deps && echo x > node_modules/.vite/deps/a"):  # beside the cache
            started = pool.started
            with pool.lease([SOURCE]) as (box, restored):
                assert suite.run(box, timeout_s=300).results
                assert box.exec(change, timeout=60).ok
                restored()
            with pool.lease([SOURCE]) as (box, restored):
                assert box.exec(f"! test -e /root/.npm/other && ! grep -q '// x' node_modules/vitest/index.cjs && "
                                "! test -e node_modules/.vite/deps", timeout=60).ok, change
                restored()
            assert pool.started == started + 1, change  # the changed container was stopped, a fresh one started
    finally:
        pool.close()
