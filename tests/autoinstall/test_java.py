"""The Java (Maven) ecosystem: survey (pom.xml, modules, Java release, wrapper, repositories, CI), the plan,
diagnoses of Maven's output, repair rules, the local repository as pins, a whole build on the FakeFactory
(an offline test needing the internet deselected with its evidence), and one real build on Docker."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.detect import detect, get_ecosystem
from autoinstall.ecosystems.java import JavaEcosystem
from autoinstall.ecosystems.java.apache_maven import HOME as APACHE_HOME
from autoinstall.ecosystems.java.apache_maven import INSTALL as APACHE_MAVEN
from autoinstall.ecosystems.java.apache_maven import VERSION as APACHE_VERSION
from autoinstall.ecosystems.java.diagnosis import diagnose
from autoinstall.ecosystems.java.pins import constraints, freeze, warm
from autoinstall.ecosystems.java.proposal import GATES_OFF
from autoinstall.ecosystems.java.repairs import MAVEN_ARGS, RAISE_SOURCE, release_parent_step, repair
from autoinstall.ecosystems.java.survey import survey
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.docker import DockerSandbox
from envs.fake import FakeFactory, FakeSandbox
from envs.host_toolchains import OFF_ENV
from envs.spec import Plan, Step
from tests.autoinstall.ecosystem_checks import TESTS, assert_diagnoses, repair_context, write_tree

if TYPE_CHECKING:
    from tests.builds import Builds  # it imports the builder, which the fast tier skips

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "java_maven"
REPORTS = (Path(__file__).parents[1] / "envs" / "data" / "surefire_reports_java_maven.txt").read_text()
JAVA = JavaEcosystem()
BUILD = Step(command="mvn -B -ntp test -Dtest=CalcTest", why="build", kind="project")
TEST_COMMAND = f"mvn -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF}"
OFFLINE_MISSING = ("[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.5.2:test "
                   "(default-test) on project calc: The following artifacts could not be resolved: "
                   "org.apache.maven.surefire:surefire-junit-platform:jar:3.5.2 (absent): Cannot access "
                   "autoinstall-cache (file:///cache/maven) in offline mode and the artifact "
                   "org.apache.maven.surefire:surefire-junit-platform:jar:3.5.2 has not been downloaded from it "
                   "before. -> [Help 1]")


def test_the_fixture_is_java_and_its_facts_point_into_it() -> None:
    assert detect(REPO)[0] is get_ecosystem("java")
    facts = survey(REPO)
    assert (facts.artifact, facts.java_release, facts.modules, facts.wrapper) == ("com.example:calc", "17", [], None)
    assert [e.text for e in facts.dependencies] == ["org.junit.jupiter:junit-jupiter"]
    assert facts.test_frameworks == ["junit5"] and facts.test_files == 2 and facts.first_test == "CalcTest"
    assert [(e.file, e.line, e.text) for e in facts.ci_tests] == [(".github/workflows/ci.yml", 8, "mvn -B verify")]
    for evidence in [facts.artifact_evidence, facts.java_evidence, *facts.dependencies, *facts.ci_tests]:
        assert evidence and (REPO / evidence.file).is_file() and evidence.line, evidence


def test_the_fixture_plan_sets_up_maven_builds_with_one_test_class_then_tests_offline() -> None:
    plan = JAVA.propose(survey(REPO), REPO, ("3.11", "3.13"))
    assert (plan.ecosystem, plan.python, plan.test_runner) == ("java", "3.13", "maven")
    setup, maven, build = plan.steps
    assert maven.command == APACHE_MAVEN and maven.kind == "other"  # no wrapper: Apache's Maven, as upstream runs
    assert "-out /etc/ssl/certs/java/cacerts" in setup.command and "~/.m2/settings.xml" in setup.command
    assert "<url>file:///cache/maven</url>" in setup.command and setup.kind == "other"
    assert ("'MAVEN_OPTS=\"-XX:TieredStopAtLevel=1 -Daether.dependencyCollector.impl=bf "
            "-Daether.dependencyCollector.bf.skipper=false -Daether.connector.basic.threads=16 "
            "${MAVEN_OPTS:-}\"' > ~/.mavenrc") in setup.command
    assert build.kind == "project" and build.command.startswith("mvn -B -ntp test -Dtest=CalcTest ")
    assert "-Dsurefire.failIfNoSpecifiedTests=false" in build.command
    assert plan.test_command == TEST_COMMAND
    assert [(c.name, c.kind, c.command) for c in plan.checks] == [
        ("collect", "collect", f"mvn -B -ntp -o -q test-compile {GATES_OFF}"), ("tests", "tests", TEST_COMMAND)]
    assert JAVA.base_image(FakeFactory(), plan.python) == "fake-base:python3.13"
    assert JAVA.PACKAGES == ("maven", "openjdk-21-jdk-headless")


POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.example</groupId>
    <artifactId>base</artifactId>
    <version>2.0-SNAPSHOT</version>
  </parent>
  <artifactId>reactor</artifactId>
  <packaging>pom</packaging>
  <modules>
    <module>core</module>
    <module>cli</module>
  </modules>
  <properties>
    <java.version>1.6</java.version>
  </properties>
  <repositories>
    <repository><id>snap</id><url>https://central.sonatype.com/repository/maven-snapshots</url></repository>
  </repositories>
  <build><plugins><plugin>
    <artifactId>maven-compiler-plugin</artifactId>
    <configuration><release>25</release></configuration>
  </plugin></plugins></build>
</project>
"""


def test_survey_reads_a_reactor_a_snapshot_parent_a_foreign_repository_and_the_wrapper(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OFF_ENV, "off")  # no host JDK 25 (test_jdk_toolchains.py plans one)
    root = write_tree(tmp_path, {
        "pom.xml": POM, "mvnw": "#!/bin/sh\n",
        ".mvn/wrapper/maven-wrapper.properties":
            "# the wrapper\ndistributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/"
            "3.9.9/apache-maven-3.9.9-bin.zip\n",
        "core/pom.xml": "<project><dependencies><dependency><groupId>org.testng</groupId><artifactId>testng"
                        "</artifactId></dependency></dependencies></project>",
        "core/src/test/java/a/CoreTest.java": "class CoreTest {}", "core/src/test/java/a/Helper.java": "",
        "cli/pom.xml": "<project/>",
    })
    facts = survey(root)
    assert facts.modules == ["core", "cli"] and facts.packaging == "pom" and facts.test_frameworks == ["testng"]
    assert (facts.java_release, facts.java_evidence.line if facts.java_evidence else 0) == ("25", 22)
    assert facts.parent == "org.example:base:2.0-SNAPSHOT" and any("SNAPSHOT" in n for n in facts.notes)
    assert [(e.line, e.text) for e in facts.repositories] == [
        (18, "https://central.sonatype.com/repository/maven-snapshots")]
    assert facts.wrapper_usable and facts.wrapper_evidence and facts.wrapper_evidence.line == 2
    assert (facts.test_files, facts.first_test) == (1, "CoreTest")
    plan = JAVA.propose(facts, root, ("3.13",))
    assert plan.steps[1].command.startswith("sh ./mvnw -B -ntp install -Dtest=CoreTest ")
    assert plan.test_command == f"sh ./mvnw -B -ntp -o test -Dmaven.test.failure.ignore=true {GATES_OFF} -fae"
    assert any("Java 25" in n and "expected to fail" in n for n in plan.notes)
    assert any("multi-module" in n for n in plan.notes) and any("sonatype" in n for n in plan.notes)


def test_a_wrapper_from_an_unreachable_host_falls_back_to_apaches_maven_from_central(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"pom.xml": "<project><artifactId>a</artifactId></project>", "mvnw": "",
                             ".mvn/wrapper/maven-wrapper.properties":
                                 "distributionUrl=https://maven.example.com/apache-maven-3.9.9-bin.zip\n"})
    facts = survey(root)
    assert facts.wrapper and not facts.wrapper_usable and any("maven.example.com" in n for n in facts.notes)
    plan = JAVA.propose(facts, root, ("3.13",))
    assert plan.steps[1].command == APACHE_MAVEN
    assert plan.steps[2].command == f"mvn -B -ntp test-compile {GATES_OFF}"  # no test sources: nothing to run
    assert (plan.test_command, plan.test_runner) == (None, "none")
    assert detect(write_tree(tmp_path / "broken", {"pom.xml": "<project"}))[0].name == "java"
    assert any("malformed XML" in n for n in survey(tmp_path / "broken").notes)


def ctx(output: str, *, phase: str = "install", failing: Step = BUILD, **kw: object) -> RepairContext:
    plan = Plan(ecosystem="java", python="3.13", steps=[failing], test_command=TEST_COMMAND, test_runner="maven")
    return repair_context(plan, diagnose, output, phase=phase, failing=failing, **kw)


def test_diagnoses_of_maven_output() -> None:
    cases = {
        "[ERROR] Fatal error compiling: error: release version 25 not supported": ("missing_tool", "jdk 25"),
        "[ERROR] Fatal error compiling: invalid target release: 24": ("missing_tool", "jdk 24"),
        "java.lang.UnsupportedClassVersionError: a/B has been compiled by a more recent version of the Java "
        "Runtime (class file version 69.0), this version of the Java Runtime only recognizes class file versions "
        "up to 65.0": ("missing_tool", "jdk 25"),
        "[ERROR] Source option 6 is no longer supported. Use 8 or later.": ("missing_tool", "source 6"),
        # captured: square/javapoet's error-prone 2.3.1 compiler (javac 9) on Debian's JDK 21
        "[ERROR]     class file has wrong version 65.0, should be 53.0":
            ("missing_tool", "jdk 9 for the compiler plugin's own javac"),
        # error-prone run as a javac plugin on a JDK that does not open javac's internals to it
        "java.lang.IllegalAccessError: class com.google.errorprone.BaseErrorProneJavaCompiler (in unnamed module "
        "@0x1) cannot access class com.sun.tools.javac.api.BasicJavacTask (in module jdk.compiler)":
            ("missing_tool", "static analysis errorprone"),
        OFFLINE_MISSING: ("missing_module", "org.apache.maven.surefire:surefire-junit-platform:jar:3.5.2"),
        "[ERROR] Non-resolvable parent POM for com.fasterxml.jackson.core:jackson-core:2.20.0-SNAPSHOT: The "
        "following artifacts could not be resolved: com.fasterxml.jackson:jackson-base:pom:2.20.0-SNAPSHOT "
        "(absent)": ("no_distribution", "com.fasterxml.jackson:jackson-base:pom:2.20.0-SNAPSHOT"),
        "Caused by: java.net.ConnectException: Connection refused": ("service_unavailable", ""),
        "java.net.UnknownHostException: example.org: Temporary failure in name resolution":
            ("network_required", ""),
    }
    assert_diagnoses(diagnose, cases)
    assert diagnose("[INFO] x\n[ERROR] something odd happened").evidence == "[ERROR] something odd happened"


def test_old_sources_compile_for_8_once_and_a_newer_jdk_is_a_recorded_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = repair(ctx("[ERROR] Source option 5 is no longer supported. Use 8 or later."))
    assert r is not None and r.kind == "set_env" and r.env == {MAVEN_ARGS: RAISE_SOURCE}
    again = ctx("[ERROR] Source option 5 is no longer supported. Use 8 or later.", env={MAVEN_ARGS: RAISE_SOURCE})
    assert repair(again) is None  # already compiling for 8, and the build itself is never skipped
    monkeypatch.setenv(OFF_ENV, "off")  # no host JDK: give up naming the release (test_jdk_toolchains.py)
    newer = repair(ctx("[ERROR] Fatal error compiling: error: release version 25 not supported"))
    assert newer is not None and newer.kind == "give_up" and "needs Java 25" in newer.reason
    unserved = "[ERROR] Failure to find org.example:gone:jar:1.0 in https://repo.maven.apache.org/maven2"
    assert diagnose(unserved).kind == "no_distribution" and repair(ctx(unserved)) is None


ERROR_PRONE_POM = """<project>
  <build><plugins><plugin>
    <artifactId>maven-compiler-plugin</artifactId>
    <configuration>
      <compilerId>javac-with-errorprone</compilerId>
      <compilerArgs>
        <arg>-XDcompilePolicy=simple</arg>
        <arg>-Xplugin:ErrorProne
             -Xep:NullAway:ERROR</arg>
        <arg>-parameters</arg>
      </compilerArgs>
    </configuration>
  </plugin></plugins></build>
</project>
"""


def test_a_static_analysis_compiler_that_cannot_run_on_jdk_21_is_disabled_by_a_recorded_step(
        tmp_path: Path) -> None:
    bundled = "[ERROR]     class file has wrong version 65.0, should be 53.0"
    r = repair(ctx(bundled))
    assert r is not None and r.kind == "insert_before" and r.step is not None and r.step.kind == "other"
    assert "JDK 9 runtime" in r.reason and "the JDK's own javac (JDK 21)" in r.step.why
    assert repair(ctx(bundled, tried=[r])) is None  # once: then the build fails with the line that names it
    plugin = "An unhandled exception was thrown by the Error Prone static analysis plugin."
    assert (again := repair(ctx(plugin))) is not None and again.step is not None
    assert again.step.command == r.step.command and "Error Prone fails on JDK 21" in again.reason
    write_tree(tmp_path, {"pom.xml": ERROR_PRONE_POM, "core/pom.xml": ERROR_PRONE_POM,
                      "target/pom.xml": ERROR_PRONE_POM})
    done = subprocess.run(["bash", "-c", r.step.command], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "static analysis disabled in: core/pom.xml, pom.xml"
    edited = (tmp_path / "pom.xml").read_text()
    assert "<fork>true</fork>" in edited and "<arg>-parameters</arg>" in edited  # the JDK's javac, forked
    assert "errorprone" not in edited and "ErrorProne" not in edited and "compilePolicy" not in edited
    assert (tmp_path / "target" / "pom.xml").read_text() == ERROR_PRONE_POM  # build output is left alone
    nothing = subprocess.run(["bash", "-c", r.step.command], cwd=tmp_path, capture_output=True, text=True)
    assert nothing.returncode == 1 and "nothing to disable" in nothing.stderr


def test_an_unserved_snapshot_parent_is_replaced_by_its_release_from_maven_central(tmp_path: Path) -> None:
    out = ("[FATAL] Non-resolvable parent POM for a.b:core:2.20.0-SNAPSHOT: The following artifacts could not be "
           "resolved: a.b:base:pom:2.20.0-SNAPSHOT (absent): Could not transfer artifact")
    r = repair(ctx(out))
    assert r is not None and r.kind == "insert_before" and r.step is not None and r.step.kind == "other"
    assert r.step.command.startswith("curl -sfI https://repo.maven.apache.org/maven2/a/b/base/2.20.0/base-2.20.0.pom")
    assert release_parent_step("a.b:base:pom:2.20.0") is None and repair(ctx(out, phase="check")) is None
    pom = tmp_path / "pom.xml"
    pom.write_text("<project><parent><artifactId>base</artifactId><version>2.20.0-SNAPSHOT</version></parent>"
                   "<version>2.20.0-SNAPSHOT</version></project>")
    edit = r.step.command.split(" && ", 1)[1]
    subprocess.run(["bash", "-c", edit], cwd=tmp_path, check=True)
    assert pom.read_text() == ("<project><parent><artifactId>base</artifactId><version>2.20.0</version></parent>"
                               "<version>2.20.0-SNAPSHOT</version></project>")  # the project's own stays


def test_an_artifact_first_needed_offline_is_fetched_by_the_same_run_online() -> None:
    r = repair(ctx(OFFLINE_MISSING, phase="tests", failing=TESTS))
    assert r is not None and r.kind == "insert_before" and r.step is not None and r.step.kind == "other"
    assert r.step.command == TEST_COMMAND.replace(" -o ", " ")
    check = Step(command=f"mvn -B -ntp -o -q test-compile {GATES_OFF}", why="offline compile")
    r = repair(ctx(OFFLINE_MISSING, phase="check", failing=check))
    assert r is not None and r.step is not None and r.step.command == f"mvn -B -ntp test-compile {GATES_OFF}"
    assert repair(ctx(OFFLINE_MISSING, phase="install")) is None  # online already: nobody serves it


def test_the_local_repository_is_the_pins_and_warm_fetches_its_release_artifacts() -> None:
    listing = ("junit/junit/4.13.2/junit-4.13.2.jar\njunit/junit/4.13.2/junit-4.13.2.pom\n"
               "com/example/calc/0.1.0-SNAPSHOT/calc-0.1.0-SNAPSHOT.jar\n")
    box = FakeSandbox(rules=[("find . -type f", listing)]).start()
    frozen = freeze(box)
    assert frozen == listing and constraints(frozen, "calc") == (
        "junit/junit/4.13.2/junit-4.13.2.jar\njunit/junit/4.13.2/junit-4.13.2.pom\n")
    hostile = ["../../etc/passwd", "a/../../../etc/x.jar", 'a/b.jar"\toutput = "/etc/y', "a/b c.jar", "-K/etc/z"]
    warm(box, constraints(frozen, "calc") + "".join(f"{h}\n" for h in hostile))
    wanted = box.files["/var/tmp/autoinstall-maven-warm.txt"].decode().split()
    assert wanted == ["junit/junit/4.13.2/junit-4.13.2.jar", "junit/junit/4.13.2/junit-4.13.2.jar.sha1",
                      "junit/junit/4.13.2/junit-4.13.2.pom", "junit/junit/4.13.2/junit-4.13.2.pom.sha1"]
    command = box.commands()[-1]
    assert 'url = "https://repo.maven.apache.org/maven2/%s"' in command and "cd /cache/maven" in command
    assert command.count("curl -") == 1 and "--parallel" in command  # one process for every file


NET_FAILS = REPORTS.replace('<testcase name="wrongSum"', '<testcase name="wrongSumIgnored"').replace(
    '<failure message="sums are off', '<skipped message="sums are off').replace("</failure>", "</skipped>")


def maven_machine(sb: FakeSandbox, cmd: str, env: dict[str, str]) -> ExecResult | None:
    """A scripted Maven: every step and check passes; the tests' reports show one test needing the internet
    until the excludes file leaves it out."""
    if cmd.startswith("find . -path '*/target/surefire-reports/TEST-"):
        left_out = any("NetTest#resolvesAHost" in v.decode() for k, v in sb.files.items() if "excludes" in k)
        text = NET_FAILS
        if left_out:
            start = text.index('  <testcase name="resolvesAHost"')
            text = text[:start] + text[text.index("</testcase>", start) + len("</testcase>"):]
        return ExecResult(exit_code=0, stdout=text)
    return ExecResult(exit_code=0) if "mvn -B" in cmd or cmd.startswith("openssl") else None


def test_a_fake_maven_build_deselects_a_test_that_needs_the_internet(tmp_path: Path) -> None:
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env", max_deselected=0.25),
                             factory=FakeFactory(maven_machine))
    assert spec.status == "verified", spec.failure
    assert spec.plan.ecosystem == "java" and spec.plan.test_runner == "maven"
    assert [d.test for d in spec.deselected] == ["com.example.calc.NetTest#resolvesAHost"]
    assert "internet" in spec.deselected[0].reason
    run = spec.verification.runs[-1]
    assert (run.passed, run.counts["skipped"]) == (5, 2)
    assert "mvn -B -ntp test -Dtest=CalcTest" in (tmp_path / "env" / "Dockerfile").read_text()


def test_the_fixture_verifies_offline_on_docker_with_per_test_ids(builds: Builds) -> None:
    """The real thing: Debian's JDK 21 and Maven, JUnit 5 from Maven Central, verified with the network off
    (the run's one build of the fixture, which the cheating agents' Java task is made of: tests/builds.py)."""
    built = builds.env(REPO.name)
    spec, out = built.spec, built.out
    assert spec.status == "verified", (spec.failure, [e.command for e in spec.log])
    run = spec.verification.runs[-1]
    outcomes = {r.test_id: r.outcome for r in run.results}
    assert outcomes == {"com.example.calc.CalcTest#slowSum": "skipped",
                        "com.example.calc.CalcTest#divisionByZeroThrows": "passed",
                        "com.example.calc.CalcTest#addsTwoNumbers": "passed",
                        "com.example.calc.CalcTest#addsTable(int, int, int)[1]": "passed",
                        "com.example.calc.CalcTest#addsTable(int, int, int)[2]": "passed",
                        "com.example.calc.ShoutTest#shoutsInCapitals": "passed"}
    # JUnit 5's dry run reports no parameterized case (addsTable's two): it counts 4, raised to the 6 that ran
    collection = spec.verification.collection
    assert collection and (collection.command, collection.selected) == (6, 6)
    assert any("2 more tests ran than the runner's listing counted" in n for n in collection.notes)
    written = json.loads((out / "spec.json").read_text())
    assert written["plan"]["test_runner"] == "maven" and "maven" in written["base_image"]
    pins = (out / "context" / "autoinstall" / "constraints.txt").read_text()
    assert "org/junit/jupiter/junit-jupiter-api/5.14.1/junit-jupiter-api-5.14.1.jar" in pins
    assert "surefire-junit-platform" in pins  # the provider resolved by the build's one test class
    # the shared cache holds the pinned artifacts from Central, each with Central's checksum of it
    jar = "org/junit/jupiter/junit-jupiter-api/5.14.1/junit-jupiter-api-5.14.1.jar"
    cached = builds.home / "cache" / "maven" / jar
    assert hashlib.sha1(cached.read_bytes()).hexdigest() == Path(f"{cached}.sha1").read_text().split()[0]
    # Apache's Maven ran everything (no wrapper here), and it is root's: the task user cannot change it
    assert any(s.command == APACHE_MAVEN for s in spec.steps) and f"ln -sf {APACHE_HOME}/bin/mvn" in APACHE_MAVEN
    with DockerSandbox(image=spec.image or "", network=False) as box:
        seen = box.exec(f"mvn -v | head -1; find {APACHE_HOME} ! -user root -o -perm /022 ! -type l | wc -l")
    assert seen.ok, seen.output
    version, not_roots = seen.stdout.splitlines()[:2]
    assert version.startswith(f"Apache Maven {APACHE_VERSION} ") and not_roots == "0", seen.output
