"""Make the exported images reachable where the trainer runs: `docker save` tarballs or a registry push."""
from __future__ import annotations

import re
from pathlib import Path

from envs.errors import EnvError
from envs.export.common import ExportManifest, ImageArtifact, write_manifest

IMAGES_DIR = "images"


def local(image: str) -> ImageArtifact:
    """An image the exported files name by its local tag."""
    return ImageArtifact(image=image, reference=image)


def push_all(images: list[str], registry: str | None) -> list[ImageArtifact]:
    """Push each distinct image to `registry`; the artifacts name the pushed references.

    Raises:
        EnvError: no registry given, or the registry refused a push (nothing has been written to OUT yet).
    """
    from envs.docker import push_image  # the docker SDK loads only when images are pushed

    if not registry:
        msg = "--images push needs --registry HOST:PORT (the registry the trainer pulls from)."
        raise EnvError(msg)
    artifacts = []
    for image in dict.fromkeys(images):
        try:
            reference = push_image(image, registry)
        except EnvError as e:
            msg = f"{e}\nNothing was exported (no files were written); fix the registry and export again."
            raise type(e)(msg) from e
        artifacts.append(ImageArtifact(image=image, reference=reference))
    return artifacts


def tarball_name(image: str) -> str:
    """`autoinstall-env/spam:abc` -> `autoinstall-env_spam_abc.tar`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", image).strip("_") + ".tar"


def save_all(manifest: ExportManifest, out: Path) -> None:
    """`docker save` each image of the manifest to OUT/images/, recording each tarball in export.json.

    Raises:
        EnvError: a save failed (e.g. the disk filled up). Its partial tarball is gone, the manifest names
            the failure and what was saved; the tasks or rows already written are kept.
    """
    from envs.docker import save_images  # the docker SDK loads only when images are saved

    (out / IMAGES_DIR).mkdir(exist_ok=True)
    for done, artifact in enumerate(manifest.images):
        relative = f"{IMAGES_DIR}/{tarball_name(artifact.image)}"
        try:
            save_images([artifact.image], out / relative)
        except EnvError as e:
            artifact.error = str(e)
            write_manifest(out, manifest)
            msg = (f"{e}\nThe rest of the export in {out} is complete and kept ({done} of "
                   f"{len(manifest.images)} images saved; {out / 'export.json'} lists them).")
            raise type(e)(msg) from e
        artifact.tarball = relative
        artifact.error = ""
        write_manifest(out, manifest)
