"""Docker: the only package that imports the docker SDK.

- `engine.py`: connecting (`connect`, `check_engine`), the proxy/label constants everything shares.
- `trust.py`: the host's CA bundle in every client (CA_ENV, the trust files a sandbox mounts and images copy).
- `sandbox.py`: `DockerSandbox` (one locked-down container: exec, snapshots, network), `interrupt_sandboxes` (Ctrl-C for other threads' sandboxes); `files.py` its file transfers, `snapshots.py` its snapshots, `upper.py` its
  own changes read from its writable layer on the host (`changes`).
- `container.py`: `DockerSandboxConfig` and how its container is created (limits, mounts, environment).
- `factory.py`: `DockerFactory`, the SandboxFactory over one engine.
- `diskwatch.py`: disk limits by polling, one poller per engine.
- `images.py`: build/import/list/save/remove images, `cleanup()`.
- `registry.py`: `push_image`, `pull_image`, `registry_ref`.
"""

from envs.docker.container import DockerSandboxConfig
from envs.docker.engine import (
    KIND_LABEL,
    PROXY_VARS,
    SNAPSHOT_REPO,
    TASK_KIND,
    check_engine,
    connect,
    engine_gone,
)
from envs.docker.factory import DockerFactory
from envs.docker.images import (
    CleanupReport,
    build_image,
    cleanup,
    image_labels,
    import_rootfs,
    list_images,
    remove_image,
    save_images,
    try_pull,
)
from envs.docker.registry import pull_image, push_image, registry_ref
from envs.docker.sandbox import DockerSandbox, interrupt_sandboxes
from envs.docker.trust import CA_DIR, CA_ENV, CA_PATH, HOST_CA_BUNDLE

__all__ = [
    "CA_DIR", "CA_ENV", "CA_PATH", "HOST_CA_BUNDLE", "KIND_LABEL", "PROXY_VARS", "SNAPSHOT_REPO", "TASK_KIND", "CleanupReport", "DockerFactory", "DockerSandbox", "DockerSandboxConfig",
    "build_image", "check_engine", "cleanup", "connect", "engine_gone", "image_labels", "import_rootfs",
    "interrupt_sandboxes", "list_images", "pull_image", "push_image", "registry_ref", "remove_image", "save_images", "try_pull",
]
