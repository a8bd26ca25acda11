"""What of a Node task belongs to the task: package.json (its scripts are the test command) and lock files,
npm's and yarn's configuration, test files by every runner's conventions, runner, transpiler and TypeScript
configuration, and the installed dependencies; product code may not exit the process or write to its stdout
(where the runner reports), nor load a test runner or an assertion library, nor pose as an assertion's matcher."""
from __future__ import annotations

from autoinstall.ecosystems.grading import rules
from envs.grading.policy import GradingRules

RULES = rules(GradingRules(
    code=[".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".vue", ".svelte", ".coffee"],
    protected=["**/package.json", "**/package-lock.json", "**/npm-shrinkwrap.json", "**/yarn.lock",
               "**/pnpm-lock.yaml", "**/pnpm-workspace.yaml", "**/.npmrc", "**/.yarnrc", "**/.yarnrc.yml",
               "**/.pnp.*", "**/__mocks__/**", "**/__fixtures__/**", "**/*.test.*", "**/*.spec.*", "**/test.*",
               "**/test-*.*", "**/*-test.*", "**/*_test.*", "**/*.config.*", "**/.mocharc*", "**/.taprc*",
               "**/.babelrc*", "**/.nycrc*", "**/.c8rc*", "**/.swcrc", "**/tsconfig*.json", "**/jsconfig*.json",
               "**/.eslintrc*", "**/karma.conf.*"],
    untransferred=["node_modules", ".yarn", ".nyc_output", "coverage"],
    code_checks=["node"],
    reach=["process.exit", "process.reallyExit", "process.stdout", "process.on(", "process.once(",
           "process.kill", "require('mocha')", 'require("mocha")', "node:test", "vitest", "@jest", "jest.",
           "require('tap')", 'require("tap")', "from 'tap'", 'from "tap"', "tape", "uvu", "require('ava')",
           # code that writes code or reaches into the module loader
           "eval(", "Function(", "globalThis", "child_process", "require.cache", "Module._", "module.constructor",
           "process.binding", "process.mainModule", "require('vm')", 'require("vm")', "node:vm", "Buffer.from(",
           # code that speaks the assertion libraries' protocols: an object with `asymmetricMatch` passes jest's and
           # vitest's toEqual/toStrictEqual whatever it holds (seen with jest 29 and vitest 2); equality testers
           # and plug-ins rewrite what an assertion means
           "asymmetricMatch", "asymmetricMatcher", "addEqualityTesters", "addCustomEqualityTester", "expect.extend",
           "jasmine.", "require('chai')", 'require("chai")', "from 'chai'", 'from "chai"', "require('expect')",
           'require("expect")', "from 'expect'", 'from "expect"', "require('should')", 'require("should")'],
))
