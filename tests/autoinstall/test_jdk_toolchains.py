"""JDKs newer than Debian's 21, without Docker: which host JDK is found (a fake /usr/lib/jvm), what the copy
keeps, which one a need chooses and from which evidence (the pom's release, source/target, the compiler plugin,
the enforcer's requireJavaVersion; javac's and the JVM's errors), the token a plan carries, the layer's
JAVA_HOME and trust, what the spec records, the failure when no host JDK suffices, and a chat model choosing
one through switch_python."""
from __future__ import annotations

import json
import os
import subprocess
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from autoinstall.ecosystems import toolchains
from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java import JavaEcosystem
from autoinstall.ecosystems.java.diagnosis import diagnose
from autoinstall.ecosystems.java.repairs import repair
from autoinstall.ecosystems.java.survey import survey
from autoinstall.ecosystems.java.toolchain import TOOLCHAINS_XML
from autoinstall.ecosystems.python import PythonEcosystem
from autoinstall.install import InstallResult, said_why
from autoinstall.plan.models.chat import ChatModel
from autoinstall.plan.models.replay_server import ReplayServer, tool_call
from envs import host_jdks, host_toolchains
from envs.docker.trust import CA_JKS
from envs.host_toolchains import ensure_toolchain_layer, find, write_tarball
from envs.spec import Failure, Plan, Step
from tests.autoinstall.ecosystem_checks import write_tree

JAVA = JavaEcosystem()
BUILD = Step(command="mvn -B -ntp test -Dtest=ShapesTest", why="build", kind="project")
RELEASE_25 = "[ERROR] Failed to execute goal ...: Fatal error compiling: error: release version 25 not supported"


def _jdk(root: Path, name: str, version: str, *, javac: bool = True) -> Path:
    prefix = root / name
    files = {"release": f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\n', "bin/java": "java",
             "lib/server/libjvm.so": f"jvm {version}", "lib/modules": f"modules {version}", "lib/src.zip": "src",
             "man/man1/java.1": "man", "docs/index.html": "docs", "demo/README": "demo", "lib/ct.sym": "ct",
             "conf/security/java.policy": "policy"}
    if javac:
        files["bin/javac"] = "javac"
    write_tree(prefix, files)
    return prefix


@pytest.fixture
def jvm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A /usr/lib/jvm with Temurin 25, a Debian-style 17 whose configuration links into /etc, a 26 early-access
    build, a JRE (no javac) and an alias link; nothing in the home folder or $JAVA_HOME."""
    root = tmp_path / "jvm"
    temurin = _jdk(root, "temurin-25-jdk-amd64", "25.0.3")
    (temurin / "lib/security").mkdir(parents=True)
    (temurin / "lib/security/cacerts").symlink_to("/etc/ssl/certs/java/cacerts")
    debian = _jdk(root, "java-17-openjdk-amd64", "17.0.15")
    write_tree(tmp_path / "etc", {"java-17/security/java.security": "securerandom.source=file:/dev/urandom"})
    (debian / "conf/security/java.security").symlink_to(tmp_path / "etc/java-17/security/java.security")
    (debian / "conf/gone.properties").symlink_to(tmp_path / "etc/java-17/gone.properties")
    (root / "java-1.17.0-openjdk-amd64").symlink_to(debian)
    _jdk(root, "jdk-26-ea", "26-ea")
    _jdk(root, "jre-25", "25.0.1", javac=False)
    monkeypatch.setattr(host_jdks, "JDK_ROOTS", (root,))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv(host_toolchains.OFF_ENV, raising=False)
    return root


def ctx(output: str, python: str = "3.13", tried: list | None = None) -> RepairContext:
    return RepairContext(plan=Plan(ecosystem="java", python=python, steps=[BUILD]), failing=BUILD, phase="install",
                         output=output, diagnosis=diagnose(output), python=python, available_pythons=[python],
                         tried=tried or [])


def test_jdks_are_found_once_per_version_by_their_release_file(jvm: Path) -> None:
    found = host_toolchains.host_toolchains("java")
    assert [t.key for t in found] == ["java-17.0.15", "java-25.0.3", "java-26-ea"]  # the JRE cannot compile
    assert [t.release for t in found] == [True, True, False]
    temurin = find("java-25.0.3")
    assert temurin is not None and temurin.prefix == str(jvm / "temurin-25-jdk-amd64")
    assert temurin.home == "/opt/toolchains/java-25.0.3" and len(temurin.digest) == 12
    assert find("java-17.0.15").prefix == str(jvm / "java-17-openjdk-amd64")  # the alias resolves to it
    assert host_jdks.version(jvm / "nowhere") is None
    (jvm / "jdk8").mkdir()
    (jvm / "jdk8/release").write_text('JAVA_VERSION="1.8.0_412"\n')
    assert host_jdks.version(jvm / "jdk8") == "8.0.412"


def test_the_copy_leaves_out_sources_and_docs_and_takes_links_out_of_the_jdk_as_files(jvm: Path,
                                                                                     tmp_path: Path) -> None:
    for key, prefix in (("java-25.0.3", "temurin-25-jdk-amd64"), ("java-17.0.15", "java-17-openjdk-amd64")):
        toolchain = find(key)
        assert toolchain is not None
        write_tarball(toolchain, tmp_path / f"{key}.tar")
        with tarfile.open(tmp_path / f"{key}.tar") as tar:
            members = {m.name.removeprefix("./"): m for m in tar.getmembers()}
            assert {m.uid for m in members.values()} == {0}
            security = tar.extractfile(members["conf/security/java.policy"])
            assert security is not None and security.read() == b"policy"
            if key == "java-17.0.15":  # Debian's link into /etc is copied as the file it points to
                linked = members["conf/security/java.security"]
                copied = tar.extractfile(linked)
                assert linked.isfile() and copied is not None and copied.read().startswith(b"securerandom")
        assert {"bin/java", "bin/javac", "lib/modules", "lib/server/libjvm.so", "lib/ct.sym", "release"} <= set(members)
        assert not any(n.startswith(("man", "docs", "demo")) or n == "lib/src.zip" for n in members), prefix
        assert "conf/gone.properties" not in members  # a link to nothing is left out
    with tarfile.open(tmp_path / "java-25.0.3.tar") as tar:  # the system trust store stays a link: the image has it
        cacerts = tar.getmember("./lib/security/cacerts")
        assert cacerts.issym() and cacerts.linkname == "/etc/ssl/certs/java/cacerts"


def test_the_layer_sets_java_home_and_path_and_trusts_the_hosts_ca(jvm: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    built: dict[str, str] = {}

    def build_image(context: Path, tag: str, **kw: object) -> None:
        built.update(tag=tag, dockerfile=(context / "Dockerfile").read_text(),
                     label=str(kw["labels"]["autoinstall.toolchain"]))  # type: ignore[index]

    from envs import docker as engine  # the layer imports it when it builds (finding toolchains must not)

    monkeypatch.setattr(engine, "image_labels", lambda tag: None)
    monkeypatch.setattr(engine, "build_image", build_image)
    tag = ensure_toolchain_layer("autoinstall-base:py3.13-maven-openjdk-21-jdk-headless-abc", "java-25.0.3",
                                 lambda _: None)
    home = "/opt/toolchains/java-25.0.3"
    assert tag == built["tag"] and "-java-25.0.3-" in tag and built["label"] == "java-25.0.3"
    assert f"ENV PATH={home}/bin:$PATH JAVA_HOME={home}\n" in built["dockerfile"]
    assert "RUN java -version && javac -version && " in built["dockerfile"]
    assert f'ln -sf {CA_JKS} "$d/jssecacerts"' in built["dockerfile"] and f"for d in {home}/lib/security;" in built[
        "dockerfile"]
    with pytest.raises(host_toolchains.ImageBuildError, match=r"java-24\.0\.1 is not on this machine .*java-17"):
        ensure_toolchain_layer("base:x", "java-24.0.1", lambda _: None)


POMS = {
    "property": "<properties><maven.compiler.release>25</maven.compiler.release></properties>",
    "plugin": ("<build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>\n"
               "<configuration><release>${jdk}</release></configuration></plugin></plugins></build>"
               "<properties><jdk>24</jdk></properties>"),
    "source/target": ("<properties><maven.compiler.source>23</maven.compiler.source>\n"
                      "<maven.compiler.target>23</maven.compiler.target></properties>"),
    "enforcer": ("<properties><maven.compiler.release>17</maven.compiler.release></properties>\n"
                 "<build><plugins><plugin><artifactId>maven-enforcer-plugin</artifactId><executions><execution>\n"
                 "<configuration><rules><requireJavaVersion>\n<version>[25,)</version>\n"
                 "</requireJavaVersion></rules></configuration></execution></executions></plugin></plugins></build>"),
    "toolchains": ("<build><plugins><plugin><artifactId>maven-toolchains-plugin</artifactId><configuration>\n"
                   "<toolchains><jdk><version>[25,)</version></jdk></toolchains></configuration></plugin></plugins>"
                   "</build>"),
}


@pytest.mark.parametrize(("case", "need", "where"), [
    ("property", "25", "pom.xml:3"), ("plugin", "24", "pom.xml:4"), ("source/target", "23", "pom.xml:3"),
    ("enforcer", "25", "pom.xml:6"), ("toolchains", "25", "maven-toolchains-plugin in pom.xml")])
def test_a_pom_asking_for_a_newer_java_plans_the_oldest_host_jdk_that_meets_it(
        jvm: Path, tmp_path: Path, case: str, need: str, where: str) -> None:
    pom = f"<project>\n<artifactId>a</artifactId>\n{POMS[case]}\n</project>"
    repo = write_tree(tmp_path / "repo", {"pom.xml": pom})
    plan = JAVA.propose(survey(repo), repo, ("3.13",))
    assert plan.python == "3.13+java-25.0.3"  # never 17 (older), never the 26 early-access build
    note = next(n for n in plan.notes if "JAVA_HOME" in n)
    assert note.startswith(f"{where} asks for Java {need}, newer than the image's JDK 21")
    assert str(jvm / "temurin-25-jdk-amd64") in note


def test_the_setup_lists_every_jdk_of_the_image_for_maven_toolchains_plugin(jvm: Path, tmp_path: Path) -> None:
    """Run on this machine with a fake JAVA_HOME: /usr/lib/jvm's JDKs and JAVA_HOME's, each by feature release."""
    home = _jdk(tmp_path / "opt", "java-25.0.3", "25.0.3")
    (home / "bin/javac").chmod(0o755)
    (tmp_path / "h/.m2").mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "h"), "JAVA_HOME": str(home)}
    subprocess.run(["bash", "-c", TOOLCHAINS_XML], env=env, check=True)
    root = ET.parse(tmp_path / "h/.m2/toolchains.xml").getroot()
    listed = {t.findtext("configuration/jdkHome"): t.findtext("provides/version") for t in root}
    assert listed[str(home)] == "25" and all(t.findtext("type") == "jdk" for t in root)
    assert all(Path(h, "bin/javac").is_file() and not Path(h).is_symlink() for h in listed)


def test_a_pom_the_image_meets_stays_on_debians_jdk(jvm: Path, tmp_path: Path) -> None:
    repo = write_tree(tmp_path, {"pom.xml": "<project><properties><maven.compiler.release>21"
                                            "</maven.compiler.release></properties></project>"})
    plan = JAVA.propose(survey(repo), repo, ("3.13",))
    assert plan.python == "3.13" and not any("JAVA_HOME" in n or "Java 21" in n for n in plan.notes)


def test_without_a_host_jdk_the_plan_says_which_release_and_where_one_comes_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    repo = write_tree(tmp_path, {"pom.xml": f"<project>\n{POMS['property']}\n</project>"})
    plan = JAVA.propose(survey(repo), repo, ("3.13",))
    [note] = [n for n in plan.notes if "Java 25" in n]
    assert plan.python == "3.13" and note.startswith("pom.xml:2 needs Java 25, newer than the image's JDK 21")
    assert "/usr/lib/jvm" in note and "Temurin" in note and "AUTOINSTALL_DEBIAN_SUITES" in note
    assert "Debian suite's openjdk-N-jdk-headless" in note
    assert note.endswith("the build is expected to fail")


def test_javacs_and_the_jvms_errors_name_the_java_they_need() -> None:
    cases = {
        RELEASE_25: "jdk 25",
        "[ERROR] Fatal error compiling: invalid target release: 24": "jdk 24",
        "[ERROR] error: invalid source release: 23": "jdk 23",
        "error: invalid source release 25 with --enable-preview": "jdk 25",
        "[ERROR] bad class file: /r/x.jar(a/B.class)\n    class file has wrong version 69.0, should be 65.0": "jdk 25",
        "java.lang.UnsupportedClassVersionError: a/B has been compiled by a more recent version of the Java "
        "Runtime (class file version 68.0), this version of the Java Runtime only recognizes class file versions "
        "up to 65.0": "jdk 24",
        # a compiler plugin's own javac 8 reading the JDK's classes: whichever JDK runs, not a need for a newer one
        "class file has wrong version 69.0, should be 52.0": "jdk 8 for the compiler plugin's own javac",
    }
    assert {out: diagnose(out).subject for out in cases} == cases


def test_a_build_error_needing_a_newer_java_switches_to_the_host_jdk_once(jvm: Path) -> None:
    r = repair(ctx(RELEASE_25))
    assert r is not None and (r.kind, r.python) == ("switch_python", "3.13+java-25.0.3")
    assert "the image has JDK 21" in r.reason and str(jvm / "temurin-25-jdk-amd64") in r.reason
    assert repair(ctx(RELEASE_25, python="3.13+java-25.0.3")) is None  # met: another rule's failure
    assert repair(ctx(RELEASE_25, tried=[r])) is None
    too_new = repair(ctx(RELEASE_25.replace("25", "26")))  # only an early-access 26 here: no release meets it
    assert too_new is not None and too_new.kind == "give_up" and "needs Java 26" in too_new.reason
    own = repair(ctx("class file has wrong version 69.0, should be 52.0", python="3.13+java-25.0.3"))
    assert own is not None and own.kind == "insert_before" and "JDK 25.0.3" in own.step.why  # type: ignore[union-attr]


def test_without_a_host_jdk_the_failure_names_the_release_and_where_one_comes_from(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(host_toolchains.OFF_ENV, "off")
    gave_up = repair(ctx(RELEASE_25))
    assert gave_up is not None and gave_up.kind == "give_up"
    assert gave_up.reason.startswith("missing tool: jdk 25: the build needs Java 25, newer than the image's JDK 21")
    failure = Failure(failure_class="install_failed", message=f"install step 2 failed: {BUILD.command}")
    result = said_why(InstallResult(ok=False, python="3.13", repairs=[gave_up], failure=failure))
    assert result.failure is not None and result.failure.message.endswith(gave_up.reason)
    assert "install step 2 failed: mvn" in result.failure.message and "Temurin" in result.failure.message


def test_the_spec_records_the_jdk_and_its_origin(jvm: Path, tmp_path: Path) -> None:
    [record] = toolchains.records(JAVA, "3.13+java-25.0.3", {}, tmp_path)
    assert (record.name, record.version, record.origin, record.home) == (
        "java", "25.0.3", "host", "/opt/toolchains/java-25.0.3")
    assert record.source.startswith(str(jvm / "temurin-25-jdk-amd64")) and "digest" in record.source


def test_a_model_may_switch_to_each_newer_host_release_and_nothing_else(jvm: Path) -> None:
    assert toolchains.choices(JAVA) == ["3.13", "3.13+java-25.0.3"]
    assert toolchains.choices(PythonEcosystem()) == list(PythonEcosystem().toolchains)  # interpreters only


def test_a_chat_model_chooses_a_host_jdk_through_switch_python(jvm: Path) -> None:
    context = ctx(RELEASE_25).model_copy(update={"available_pythons": toolchains.choices(JAVA)})
    replies = [tool_call("submit_repair", {"kind": "switch_python", "python": "3.13+java-26", "reason": "newer"}),
               tool_call("submit_repair", {"kind": "switch_python", "python": "3.13+java-25.0.3",
                                           "reason": "release 25 needs JDK 25"})]
    with ReplayServer(replies) as server:
        fix = ChatModel("m", server.base_url).repair(context)
    assert fix is not None and (fix.kind, fix.python) == ("switch_python", "3.13+java-25.0.3")
    first, second = server.requests
    assert "3.13+java-25.0.3" in first["messages"][1]["content"]  # the context lists what it may name
    assert "X.Y+NAME-VERSION" in first["messages"][0]["content"]
    schema = next(t for t in first["tools"] if t["function"]["name"] == "submit_repair")
    assert "3.13+java-25.0.3" in json.dumps(schema)
    refused = second["messages"][-1]["content"]
    assert "'3.13+java-26' is not one of available_pythons" in refused
