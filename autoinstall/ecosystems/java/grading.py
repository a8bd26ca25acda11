"""What of a Java task belongs to the task: test sources and resources, the poms and Maven's own files, build
output, ServiceLoader registrations and JUnit's properties (both can load listeners into the test JVM), and
any new class outside the project's own packages (an `org/junit/Assert.java` in main would come first on the
class path)."""
from __future__ import annotations

from autoinstall.ecosystems.grading import rules
from envs.grading.policy import GradingRules, NewModuleRule

RULES = rules(GradingRules(
    code=[".java", ".kt", ".groovy", ".scala"],
    protected=["**/src/test/**", "**/src/it/**", "**/pom.xml", "**/.mvn/**", "**/mvnw", "**/mvnw.cmd",
               "**/META-INF/services/**", "**/junit-platform.properties", "**/surefire*.properties",
               "**/logback-test.xml", "**/*.gradle", "**/*.gradle.kts", "**/gradle/**"],
    untransferred=["target", ".m2"],
    code_checks=["java"],
    new_modules=[NewModuleRule(suffixes=[".java", ".kt", ".groovy", ".scala"], anchor=".java")],
    reach=["org.junit", "junit", "surefire", "System.exit", "Runtime.getRuntime().halt", "TestExecutionListener",
           "LauncherSession", "System.setOut",
           # reflection, class loading and the JVM's own hooks
           "setAccessible", "java.lang.reflect", "MethodHandles", "Instrumentation", "ClassLoader", "Class.forName",
           "sun.misc", "Unsafe", "addShutdownHook", "ProcessBuilder", "Runtime.getRuntime", "getAllStackTraces"],
    compiled=["target/classes", "target/test-classes", "target/maven-status", "build/classes"],
))
