"""A Maven reactor module whose build cannot complete here (its plugin fetches protoc from a host no machine
reaches) is left out with what is built on it, counted as deselected with the plugin's own line as the reason,
and the other modules are built and tested: the reactor read from the poms, the rule, the Surefire side, and
the fixture built on Docker."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.base import RepairContext
from autoinstall.ecosystems.java import JavaEcosystem
from autoinstall.ecosystems.java.apache_maven import INSTALL, URL, apache_maven
from autoinstall.ecosystems.java.diagnosis import diagnose
from autoinstall.ecosystems.java.modules import MAVEN_ARGS, REASON, excluded, leave_out_module, with_excluded
from autoinstall.ecosystems.java.reactor import built_on, read_reactor
from autoinstall.ecosystems.java.repairs import RAISE_SOURCE, repair
from autoinstall.options import BuildOptions
from autoinstall.pipeline import build_environment
from envs.base import ExecResult
from envs.spec import Deselection, Plan, Step
from envs.testrun.maven_runner import EXCLUDES_FILE, MODULE_PREFIX, excludes, maven_test_command
from tests.autoinstall.test_install_loop import PASSING, World, install

REPO = Path(__file__).parents[1] / "fixtures" / "repos" / "maven_module_unbuildable"
BUILD = Step(command="mvn -B -ntp install -Dtest=CalcTest", why="build", kind="project")
FAILED = (
    "[INFO] reactor ............................................ SUCCESS [ 20.179 s]\n"
    "[INFO] core ............................................... SUCCESS [01:33 min]\n"
    "[INFO] proto .............................................. FAILURE [ 12.035 s]\n"
    "[INFO] app ................................................ SKIPPED\n"
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-antrun-plugin:3.1.0:run (fetch-protoc) on "
    "project proto: An Ant BuildException has occured: java.net.UnknownHostException: downloads.example.invalid\n"
    "[ERROR] around Ant part ...<get retries=\"1\" src=\"https://downloads.example.invalid/protoc/25.1/protoc-25.1-"
    "linux-x86_64.zip\" dest=\"/w/proto/target/protoc.zip\" />... @ 4:139 in /w/proto/target/antrun/build-main.xml: "
    "Unknown host downloads.example.invalid\n"
    "[ERROR] -> [Help 1]\n"
    "[ERROR]   mvn <args> -rf :proto\n")
"""What Maven 3.9.9 printed building the fixture (cut to the summary and the error)."""


def ctx(output: str, *, repo: Path | None = REPO, phase: str = "install", **kw: object) -> RepairContext:
    plan = Plan(ecosystem="java", python="3.13", steps=[BUILD], test_command="mvn -B -o test", test_runner="maven")
    return RepairContext(plan=plan, failing=BUILD, phase=phase, output=output, diagnosis=diagnose(output),
                         python="3.13", available_pythons=["3.13"], repo=repo, **kw)


def test_the_reactor_is_read_from_the_poms_with_sibling_dependencies_and_static_test_counts() -> None:
    modules = read_reactor(REPO)
    assert [(m.path, m.artifact, m.depends_on, m.tests) for m in modules] == [
        ("core", "core", [], 3), ("proto", "proto", ["core"], 1), ("app", "app", ["proto"], 1)]
    assert [m.artifact for m in built_on(modules, "proto")] == ["proto", "app"]
    assert [m.artifact for m in built_on(modules, "core")] == ["core", "proto", "app"]
    assert built_on(modules, "reactor") == []  # the root is not a module


def test_nested_aggregators_are_followed_and_managed_versions_are_no_dependency(tmp_path: Path) -> None:
    pom = "<project><artifactId>{a}</artifactId>{body}</project>"
    tree = {
        "pom.xml": pom.format(a="root", body="<modules><module>libs</module><module>svc</module></modules>"),
        "libs/pom.xml": pom.format(a="libs", body="<packaging>pom</packaging><modules><module>a</module></modules>"
                                   "<dependencyManagement><dependencies><dependency><artifactId>svc</artifactId>"
                                   "</dependency></dependencies></dependencyManagement>"),
        "libs/a/pom.xml": pom.format(a="lib-a", body=""),
        "libs/a/src/test/java/ATest.java": "class ATest { @Test void a() {} @ParameterizedTest void b() {} }",
        "svc/pom.xml": pom.format(a="svc", body="<build><plugins><plugin><dependencies><dependency><artifactId>"
                                  "lib-a</artifactId></dependency></dependencies></plugin></plugins></build>"),
        "svc/src/test/java/OldTest.java": "class OldTest extends TestCase { public void testIt() {} }"}
    for name, text in tree.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    modules = read_reactor(tmp_path)
    assert [(m.path, m.depends_on, m.tests) for m in modules] == [
        ("libs", [], 0), ("svc", ["lib-a"], 1), ("libs/a", [], 2)]
    # leaving out an aggregator takes its modules, and what depends on them, too
    assert [m.path for m in built_on(modules, "libs")] == ["libs", "svc", "libs/a"]


def test_maven_args_exclusions_merge_into_one_pl_and_keep_other_arguments() -> None:
    assert with_excluded("", ["proto", "app"]) == "-pl !:proto,!:app"
    merged = with_excluded(f"{RAISE_SOURCE} -pl !:proto", ["app", "proto"])
    assert merged == f"{RAISE_SOURCE} -pl !:proto,!:app" and excluded(merged) == ["proto", "app"]


def test_a_module_whose_plugin_cannot_download_is_left_out_with_what_is_built_on_it() -> None:
    fix = repair(ctx(FAILED))
    assert fix is not None and fix.kind == "set_env" and fix.env == {MAVEN_ARGS: "-pl !:proto,!:app"}
    assert [(d.test, d.uncollected) for d in fix.left_out] == [(f"{MODULE_PREFIX}proto", 1), (f"{MODULE_PREFIX}app", 1)]
    proto, app = (d.reason for d in fix.left_out)
    assert proto.startswith(f"{REASON}: org.apache.maven.plugins:maven-antrun-plugin:3.1.0:run (fetch-protoc) on "
                            "project proto cannot complete here") and "UnknownHostException" in proto
    assert app.startswith(f"{REASON}: built on proto") and "2 tests" in fix.reason
    # the source-release repair's arguments stay; once left out, the same failure means MAVEN_ARGS is not read
    again = repair(ctx(FAILED, env={MAVEN_ARGS: RAISE_SOURCE}))
    assert again is not None and again.env == {MAVEN_ARGS: f"{RAISE_SOURCE} -pl !:proto,!:app"}
    assert repair(ctx(FAILED, env={MAVEN_ARGS: "-pl !:proto,!:app"})) is None


@pytest.mark.parametrize("output", [
    FAILED.replace("project proto", "project core"),  # everything is built on it: nothing with tests is left
    FAILED.replace("project proto", "project reactor"),  # the root pom itself
    "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) "
    "on project proto: Compilation failure\n[ERROR] /w/proto/src/main/java/Message.java:[3,1] ';' expected\n",
])
def test_no_module_is_left_out_for_the_root_a_module_everything_needs_or_a_cause_a_fix_could_reach(
        output: str) -> None:
    assert leave_out_module(ctx(output)) is None
    assert leave_out_module(ctx(FAILED, repo=None)) is None


def test_a_module_left_out_is_not_a_surefire_pattern() -> None:
    module = Deselection(test=f"{MODULE_PREFIX}proto", reason=f"{REASON}: x", uncollected=1)
    test = Deselection(test="com.example.core.CalcTest#multiplies(int)[2]", reason="needs the internet")
    assert excludes([module, test]) == ["com.example.core.CalcTest#multiplies"]
    assert EXCLUDES_FILE not in maven_test_command("mvn -o test", [module])
    assert EXCLUDES_FILE in maven_test_command("mvn -o test", [module, test])


def test_the_fixture_builds_and_tests_the_other_modules_on_docker(docker_engine: None, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The real thing: Maven names the failing plugin, proto and app are left out and counted, core is built
    and tested offline; 2 of 5 tests left out is over the 5 % cap, so the environment is partial."""
    monkeypatch.setenv("AUTOINSTALL_HOME", str(Path.home() / ".autoinstall"))  # the machine's warm cache
    spec = build_environment(str(REPO), BuildOptions(out_dir=tmp_path / "env"))
    assert (spec.status, spec.failure and spec.failure.failure_class) == ("partial", "deselection_cap"), (
        spec.failure, [e.command for e in spec.log])
    assert [(d.test, d.uncollected) for d in spec.deselected] == [("module:proto", 1), ("module:app", 1)]
    assert "maven-antrun-plugin" in spec.deselected[0].reason and "downloads.example.invalid" in spec.deselected[0].reason
    assert spec.env[MAVEN_ARGS] == "-pl !:proto,!:app"
    outcomes = {r.test_id: r.outcome for r in spec.verification.runs[-1].results}
    assert outcomes == {f"com.example.core.CalcTest#{m}": "passed" for m in ("addsTwoNumbers", "addsNegatives",
                                                                          "multiplies")}
    collection = spec.verification.collection
    assert collection and (collection.suite, collection.selected) == (5, 3)
    assert "2 of 5 tests (40%) are deselected" in spec.failure.message
    assert 'ENV MAVEN_ARGS="-pl !:proto,!:app"' in (tmp_path / "env" / "Dockerfile").read_text()


MOJO = (
    "[INFO] core ............................................... SUCCESS [01:40 min]\n"
    "[INFO] proto .............................................. FAILURE [  7.946 s]\n"
    "[INFO] BUILD FAILURE\n"
    "[ERROR] Failed to execute goal io.github.ascopes:protobuf-maven-plugin:5.1.7:generate-test (default) on project "
    "proto: Execution default of goal io.github.ascopes:protobuf-maven-plugin:5.1.7:generate-test failed: Unable to "
    "load the mojo 'generate-test' (or one of its required components) from the plugin "
    "'io.github.ascopes:protobuf-maven-plugin:5.1.7': com.google.inject.ProvisionException: Unable to provision\n"
    "[ERROR] 1) [Guice/NullInjectedIntoNonNullable]: null returned by binding at LocatorWiring\n"
    "[ERROR]   mvn <args> -rf :proto\n")
"""What Debian trixie's Maven printed building google/gson's proto module (issue 23; cut, module names as the
fixture's): the plugin's components cannot be wired in this Maven."""


def test_a_plugin_debians_maven_cannot_load_gets_apaches_maven_then_its_module_is_left_out() -> None:
    """Debian's Maven cannot wire the plugin (Apache's 3.9.11 loads it and builds gson's proto module): Apache's
    Maven from Maven Central goes before the build, once; the same failure on it leaves the module out. A build
    through the project's wrapper (Apache's Maven already) leaves the module out at once."""
    first = repair(ctx(MOJO))
    assert first is not None and first.kind == "insert_before" and first.step is not None
    assert first.step.command == INSTALL and URL.startswith("https://repo.maven.apache.org/maven2/org/apache/maven/")
    assert "ln -sf /opt/apache-maven-" in INSTALL and "sha512sum -c" in INSTALL and "--no-same-owner" in INSTALL
    assert "io.github.ascopes:protobuf-maven-plugin:5.1.7" in first.step.why
    fix = repair(ctx(MOJO, tried=[first]))
    assert fix is not None and fix.env == {MAVEN_ARGS: "-pl !:proto,!:app"}
    assert "Unable to load the mojo 'generate-test'" in fix.left_out[0].reason
    wrapper = Step(command="sh ./mvnw -B -ntp install -Dtest=CalcTest", why="build", kind="project")
    assert apache_maven(ctx(MOJO).model_copy(update={"failing": wrapper})) is None
    # the embedded model's plans install Apache's Maven first (a plan without a wrapper): the module goes at once
    apache = Step(command=INSTALL, why="Apache's Maven", kind="other")
    planned = ctx(MOJO)
    planned = planned.model_copy(update={"plan": planned.plan.model_copy(update={"steps": [apache, BUILD]})})
    assert apache_maven(planned) is None
    assert (fix := repair(planned)) is not None and fix.env == {MAVEN_ARGS: "-pl !:proto,!:app"}
    assert apache_maven(ctx(FAILED)) is None  # a plugin that loads but cannot download: not Maven's fault


UNRESOLVED_PLUGIN = (
    "[INFO] ----------------------< com.example:proto >----------------------\n"
    "[INFO] Building proto messages 1.0-SNAPSHOT                             [3/4]\n"
    "[INFO]   from proto/pom.xml\n"
    "[WARNING] The POM for org.example.tools:native-maven-plugin:jar:9.9.9 is missing, no dependency information "
    "available\n"
    "[INFO] Reactor Summary for reactor 1.0-SNAPSHOT:\n"
    "[INFO] reactor ............................................ SUCCESS [ 19.774 s]\n"
    "[INFO] core ............................................... SUCCESS [ 55.460 s]\n"
    "[INFO] proto messages ..................................... FAILURE [  0.946 s]\n"
    "[INFO] app ................................................ SKIPPED\n"
    "[INFO] BUILD FAILURE\n"
    "[INFO] Total time:  08:45 min\n"
    "[ERROR] Plugin org.example.tools:native-maven-plugin:9.9.9 or one of its dependencies could not be resolved:\n"
    "[ERROR] \tCould not find artifact org.example.tools:native-maven-plugin:jar:9.9.9 in autoinstall-cache "
    "(file:///cache/maven)\n"
    "[ERROR] \tCould not find artifact org.example.tools:native-maven-plugin:jar:9.9.9 in central "
    "(https://repo.maven.apache.org/maven2)\n"
    "[ERROR] -> [Help 1]\n"
    "[ERROR] \n"
    "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/PluginResolutionException\n")
"""The shape Maven 3.9.9 printed when jline/jline3's graal module's plugin was on no reachable repository (issue
23; cut, names as the fixture's): no `on project X`; the module is the summary's FAILURE line, by its name."""


def test_a_module_whose_plugin_no_repository_serves_is_left_out_though_maven_names_no_project() -> None:
    fix = repair(ctx(UNRESOLVED_PLUGIN))
    assert fix is not None and fix.env == {MAVEN_ARGS: "-pl !:proto,!:app"}
    proto = fix.left_out[0].reason
    assert proto.startswith(f"{REASON}: resolving its plugins on project proto cannot complete here: Plugin "
                            "org.example.tools:native-maven-plugin:9.9.9 or one of its dependencies could not be "
                            "resolved: Could not find artifact"), proto
    # a summary whose FAILURE module has no header in the output (cut away) names nothing
    headless = UNRESOLVED_PLUGIN.split("[WARNING]", 1)[1]
    assert leave_out_module(ctx(headless)) is None


def reactor(root: Path) -> Path:
    """a <- b <- c (b's test-jar, test scope) <- d (a plugin dependency), and e on its own: tests in a, b, c, e."""
    pom = "<project><artifactId>{a}</artifactId>{body}</project>"
    dep = "<dependency><artifactId>{a}</artifactId>{extra}</dependency>"
    tree = {
        "pom.xml": pom.format(a="root", body="<modules>" + "".join(f"<module>{m}</module>" for m in "abcde")
                              + "</modules>"),
        "a/pom.xml": pom.format(a="a", body=""),
        "b/pom.xml": pom.format(a="b", body=f"<dependencies>{dep.format(a='a', extra='')}</dependencies>"),
        "c/pom.xml": pom.format(a="c", body="<dependencies>" + dep.format(
            a="b", extra="<type>test-jar</type><scope>test</scope>") + "</dependencies>"),
        "d/pom.xml": pom.format(a="d", body="<build><plugins><plugin><dependencies>" + dep.format(a="c", extra="")
                                + "</dependencies></plugin></plugins></build>"),
        "e/pom.xml": pom.format(a="e", body=""),
        "a/src/test/java/ATest.java": "class ATest { @Test void one() {} @Test void two() {} }",
        **{f"{m}/src/test/java/{m.upper()}Test.java": "class T { @Test void one() {} }" for m in "bce"}}
    for name, text in tree.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_install_loop_rebuilds_the_reactor_without_each_module_left_out_and_what_is_built_on_it(
        tmp_path: Path) -> None:
    """One module fails (b): it goes with c and d, built on it, and the build is retried without them; then
    another (e) fails on its own: the exclusions merge, and the build starts over from a fresh sandbox with all
    four left out, each named with its reason and counted; a, which needs none of them, is built and tested."""

    builds: list[str] = []

    def behaviour(sb: World, cmd: str, env: dict) -> ExecResult | bytes:
        if cmd.startswith("mvn "):
            left_out = excluded(env.get(MAVEN_ARGS, ""))
            builds.append(",".join(left_out))
            if "b" not in left_out:
                return ExecResult(exit_code=1, stdout=FAILED.replace("project proto", "project b"))
            if "e" not in left_out:
                return ExecResult(exit_code=1, stdout=(
                    "[ERROR] Failed to execute goal org.codehaus.mojo:exec-maven-plugin:3.5.0:exec (gen) on project e: "
                    'Command execution failed.: Cannot run program "protoc-gen-grpc" (in directory "/w/e"): '
                    "error=2, No such file or directory\n"))
            return ExecResult(exit_code=0)
        return PASSING if "pytest" in cmd else ExecResult(exit_code=0)

    plan = Plan(ecosystem="java", python="3.13", steps=[BUILD], test_command="python -m pytest tests")
    result, made = install(behaviour, plan, reactor(tmp_path), ecosystem=JavaEcosystem())
    assert result.ok, result.failure
    # (a World answers each command twice: FakeSandbox's behaviour and its own) retried without b, c and d, then
    # started over in a fresh sandbox with all four out
    assert list(dict.fromkeys(builds)) == ["", "b,c,d", "b,c,d,e"] and len(made) == 2
    assert result.env[MAVEN_ARGS] == "-pl !:b,!:c,!:d,!:e"
    assert [(d.test, d.uncollected) for d in result.deselected] == [
        ("module:b", 1), ("module:c", 1), ("module:d", None), ("module:e", 1)]
    b, c, d, e = (x.reason for x in result.deselected)
    assert b.startswith(f"{REASON}: org.apache.maven.plugins:maven-antrun-plugin:3.1.0:run (fetch-protoc) on project b")
    assert c.startswith(f"{REASON}: built on b, which cannot be built here") and d.startswith(f"{REASON}: built on b")
    assert 'Cannot run program "protoc-gen-grpc"' in e
