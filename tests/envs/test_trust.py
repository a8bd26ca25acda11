"""The CA table (envs/docker/trust.py) without Docker: its files, the Java truststore, and that the sandbox
and the base image recipe apply the same table (tests/envs/test_host_ca.py proves the clients trust it)."""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path
from string import Template

import pytest

from envs import baseimage
from envs.docker.container import DockerSandboxConfig, container_env
from envs.docker.trust import CA_DIR, CA_ENV, CA_JKS, HOST_CA_BUNDLE, java_truststore, trust_dir, trust_files

PEM = "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n"


def test_every_variable_names_a_file_the_trust_files_hold(tmp_path: Path) -> None:
    bundle = tmp_path / "b.pem"
    bundle.write_text(PEM.format("AAEC") + PEM.format("AwQF"))
    names = {f"{CA_DIR}/{name}" for name in trust_files(bundle)}
    for value in CA_ENV.values():
        assert value.rpartition("=")[2] in names, value
    assert CA_ENV["MAVEN_OPTS"] == f"-Djavax.net.ssl.trustStore={CA_JKS}"


def test_the_java_truststore_holds_each_certificate_once_and_is_the_same_every_time() -> None:
    bundle = (PEM.format("AAEC") + PEM.format("AwQF") + PEM.format("AA\nEC")).encode()
    jks = java_truststore(bundle)
    assert struct.unpack(">III", jks[:12]) == (0xFEEDFEED, 2, 2)
    assert jks == java_truststore(bundle) and b"autoinstall-0001" in jks and b"\x03\x04\x05" in jks
    body, digest = jks[:-20], jks[-20:]
    assert digest == hashlib.sha1("changeit".encode("utf-16-be") + b"Mighty Aphrodite" + body).digest()


def test_a_sandbox_mounts_the_trust_dir_of_its_bundle_and_gets_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOINSTALL_HOME", str(tmp_path / "home"))
    bundle = tmp_path / "b.pem"
    bundle.write_text(PEM.format("AAEC"))
    made = trust_dir(bundle)
    assert made == trust_dir(bundle) and sorted(p.name for p in made.iterdir()) == sorted(trust_files(bundle))
    assert oct(made.stat().st_mode & 0o777) == "0o755"
    env = container_env(DockerSandboxConfig(ca_bundle=bundle, pass_proxy_env=False))
    assert env.items() >= CA_ENV.items()
    assert not container_env(DockerSandboxConfig(ca_bundle=None, pass_proxy_env=False)).keys() & CA_ENV.keys()


def test_the_base_image_recipe_sets_the_same_table_and_copies_the_same_files(tmp_path: Path) -> None:
    bundle = tmp_path / "b.pem"
    bundle.write_text(PEM.format("AAEC"))
    (_, _, variables), *_ = baseimage._recipes("3.13", "http://a/debian", bundle, registry=False)
    text = Template(baseimage.TEMPLATE.read_text()).substitute(variables | {"base": "img"})
    assert f"COPY trust/ {CA_DIR}/" in text
    for name, value in CA_ENV.items():
        assert f'{name}="{value}"' in text
    assert "jssecacerts" in text and "update-ca-certificates" in text
    if HOST_CA_BUNDLE.is_file():
        assert baseimage._recipes("3.13", "http://a/debian", HOST_CA_BUNDLE, registry=False)[0][0] != \
            baseimage._recipes("3.13", "http://a/debian", bundle, registry=False)[0][0]
