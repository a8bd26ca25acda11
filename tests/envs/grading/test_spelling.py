"""Names spelled the one way each language's lexer reads them (envs/grading/kit/spelling.py `spelled`), and
comments those its lexer sees: an agent's added code cannot pass the grader's text screens by an escape, a raw
identifier, a compatibility character or a `//` inside a string, while honest code whose literals hold such
text is taken."""
from __future__ import annotations

from pathlib import Path

import pytest

from autoinstall.ecosystems.go.grading import RULES as GO
from autoinstall.ecosystems.java.grading import RULES as JAVA
from autoinstall.ecosystems.node.grading import RULES as NODE
from autoinstall.ecosystems.python.grading import RULES as PYTHON
from autoinstall.ecosystems.rust.grading import RULES as RUST
from envs.grading.kit import go_reach, spelling
from tests.envs.grading.taken import why_refused

JAVA_FILE = "src/main/java/com/example/Calc.java"
JAVA_START = ("package com.example;\n\npublic final class Calc {\n    public static int f(int a) {\n"
              "        return a;\n    }\n}\n")
RUST_START = "pub fn f(a: i32) -> i32 {\n    a\n}\n"
JS_START = "'use strict';\nfunction f(a) {\n  return a;\n}\nmodule.exports = { f };\n"
PY_START = "def f(a):\n    return a\n"
GO_START = 'package calc\n\nimport "strings"\n\nfunc F(s string) string { return strings.ToUpper(s) }\n'


def java(line: str) -> tuple:
    """The Java case: `line` added before the method's return."""
    after = JAVA_START.replace("        return a;", f"        {line}\n        return a;")
    return JAVA, JAVA_FILE, JAVA_START, after


def rust(line: str) -> tuple:
    return RUST, "src/lib.rs", RUST_START, RUST_START.replace("    a\n", f"    {line}\n    a\n")


def js(added: str) -> tuple:
    return NODE, "lib/f.js", JS_START, JS_START + added


def py(added: str) -> tuple:
    return PYTHON, "pkg/f.py", PY_START, PY_START + added


def go(added: str) -> tuple:
    return GO, "calc/exit.go", GO_START, GO_START + added


def c(added: str) -> tuple:
    return GO, "calc/exit.c", "// native\n", "// native\n" + added


CASES = {  # (rules, file, start, the agent's version): what the screens refuse, spelled another way
    "Java: a unicode escape in a name": java(r"\u0053ystem.exit(0);"),
    "Java: an escape with many u's": java(r"\uuu0052untime.getRuntime().halt(0);"),
    "Java: the dot escaped": java(r"System\u002eexit(0);"),
    "Java: a method reference escaped": java(r"java.util.function.IntConsumer l = \u0053ystem::\u0065xit;"),
    "Java: a line break escaped inside a line comment": java(r"// \u000a System . exit(0);"),
    "Java: a block comment ended by an escape": java(r"/* *\u002f Runtime . getRuntime(); /* */"),
    "Java: a path spelled by octal escapes": java(r'new java.io.FileOutputStream("/pr\157c/self/fd/1");'),
    "Java: a // inside a string before the exit": java('String s = "a//"; System . exit(0);'),
    "Java: an equality named by an escape": (
        JAVA, JAVA_FILE, JAVA_START,
        JAVA_START.replace("}\n}\n", "}\n    public boolean \\u0065quals(Object o) { return true; }\n}\n")),
    "Kotlin: a backticked name": (JAVA, "src/main/kotlin/Calc.kt", "fun f() = 1\n",
                                  "fun f() = 1\nfun g() { System.`exit`(0) }\n"),
    "Groovy: a quoted member name": (JAVA, "src/main/groovy/Calc.groovy", "class Calc {}\n",
                                     "class Calc { static { System.'exit'(0) } }\n"),
    "Rust: a raw identifier through a renaming": rust("use std::r#process as q; q::r#exit(0);"),
    "Rust: raw identifiers in a nested use": rust("use std::{r#process::{r#exit as leave}}; leave(0);"),
    "Rust: a string's escapes": rust(r'print!("test re\x73ult: ok");'),
    "Rust: a // inside a string before the exit": rust('let s = "a//"; std :: process :: exit(0);'),
    "Rust: a nested block comment whose text opens a string before a comment's opener": (
        RUST, "src/lib.rs", RUST_START, RUST_START + '/* a /* b */ " */\npub fn g() {\n    let _s = "/*";\n'
        '    use std::{process as p};\n    p::exit(0);\n    let _t = "*/";\n}\n'),
    "Kotlin: a nested block comment whose text opens a string before a comment's opener": (
        JAVA, "src/main/kotlin/Calc.kt", "fun f() = 1\n",
        'fun f() = 1\n/* a /* b */ " */\nfun g() { val s = "/*"; System.exit(0); val t = "*/" }\n'),
    "Rust: an equality named raw": (RUST, "src/lib.rs", RUST_START,
                                    RUST_START + "pub struct A;\nimpl PartialEq for A {\n"
                                    "    fn r#eq(&self, other: &A) -> bool { true }\n}\n"),
    "JavaScript: an escaped name": js("pr\\u006fcess.\\u{65}xit(0);\n"),
    "JavaScript: a module's name by escapes": js("const c = require('child\\x5fprocess');\n"),
    "JavaScript: a runner's module by an escaped ordinary character": js("require('node\\:test');\n"),
    "JavaScript: a module bound under an escaped name, then patched":
        js("const \\u0061s = require('node:assert');\nas.strictEqual = () => {};\n"),
    "JavaScript: a // inside a string before the exit": js('const s = "a//"; process . exit(0);\n'),
    "JavaScript: a regular expression holding // after a condition":
        js("if (a) /[//]/.test(s); process . exit(0);\n"),
    "JavaScript: a comment's opener inside a nested template": js("const s = `${`/*`}`;\nprocess.exit(0);\nconst t = `*/`;\n"),
    "JavaScript: a line comment's opener inside a nested template": js("const s = `${`//`}`; process.exit(0);\n"),
    "JavaScript: a regular expression's class holding a quote and an opener":
        js('if (ok) /["/*]/.test(s);\nprocess.exit(0);\n// */\n'),
    "JavaScript: a regular expression after a block": js('function g() {}\n/"\\/*/.test(s); process.exit(0); "*/"\n'),
    "JavaScript: a regular expression after a class body": js('class X {}\n/"\\/*/.test(s); process.exit(0); //"*/\n'),
    "JavaScript: an opener in JSX text": js("const el = <p>/*</p>;\nprocess.exit(0);\nconst e2 = <p>*/</p>;\n"),
    "JavaScript: an opener in JSX text on a line of its own":
        js("const el = (\n  <p>\n    /*\n  </p>\n);\nprocess.exit(0);\nconst e2 = <p>*/</p>;\n"),
    "JavaScript: quotes inside templates around the exit": js("const a = `'`; process.exit(0); const b = `'`;\n"),
    "JavaScript: await as a name, divided by a string that holds an opener":
        js('var await = 2;\nconst x = await /"/*"; const p = process; "*/";\n'),
    "JavaScript: of as a name, divided by a string that holds an opener":
        js('var of = 2;\nconst x = of /"/*"; const p = process; "*/";\n'),
    "JavaScript: a regular expression yielded, holding a quote and an opener":
        js('function* g() { yield /"\\/*/; }\nconst p = process; //"*/\n'),
    "Scala: a symbol's quote read as a string's before a comment's opener": (
        JAVA, "src/main/scala/Calc.scala", "object Calc\n",
        "object Calc\nobject G { val x = 'a; val s = \"' /* \"; System.exit(0); val t = \"*/\" }\n"),
    "Groovy: a single-quoted string holding a quote and an opener": (
        JAVA, "src/main/groovy/G.groovy", "class G {}\n",
        "class G {}\nclass H { def s = '\" /*'; static { System.exit(0) }; def t = '*/' }\n"),
    "JavaScript: an HTML-like comment holding a backtick before a template's opener":
        js("<!-- `\nconst a = `/*`; const p = process; const b = `*/`;\n"),
    "JavaScript: a line's leading --> holding a backtick before a template's opener":
        js("x = 1\n  --> `\nconst a = `/*`; const p = process; const b = `*/`;\n"),
    "JavaScript: <!-- as operators in a module": js("let b = 3; if (a <!--b) { const p = process; }\n"),
    "JavaScript: a hashbang holding a backtick before a template's opener": (
        NODE, "lib/f.js", "#!/usr/bin/env node `\n" + JS_START,
        "#!/usr/bin/env node `\n" + JS_START + "const a = `/*`; const p = process; const b = `*/`;\n"),
    "TypeScript: a non-null operand divided by a string that holds an opener":
        (NODE, "lib/f.ts", JS_START, JS_START + 'const y = x! / 2 + "/*"; const p = process; "*/";\n'),
    "JavaScript: a test library loaded by a dynamic import":
        js("import('chai').then((c) => { c.Assertion.prototype.assert = () => {}; });\n"),
    "JavaScript: a runner loaded by a dynamic import, spaced": js("import ( 'mocha' ).then((m) => {});\n"),
    "Kotlin: an opener inside a template's string": (JAVA, "src/main/kotlin/Calc.kt", "fun f() = 1\n",
                                                    'fun f() = 1\nval s = "${"/*"}"\nfun g() { System.exit(0) }\n'
                                                    'val t = "*/"\n'),
    "Scala: an opener inside an interpolation": (JAVA, "src/main/scala/Calc.scala", "object Calc\n",
                                                'object Calc\nobject G { val s = s"${"/*"}"; System.exit(0); '
                                                'val t = "*/" }\n'),
    "Python: a compatibility character in a name": py("import sys\nsys.stdout.\uff57rite('x')\n"),
    "Python: a module by a compatibility character": py("import \uff42ase64\n"),
    "Python: a line continuation": py("import sys\nsys.stdout.\\\nwrite('x')\n"),
    "Python: a floor division is no comment": py("import sys\nx = 1 // 1; sys . stdout . write('x')\n"),
    "Go: an import path in a raw string": go("\nimport o `os`\n\nfunc init() { o.Exit(0) }\n"),
    "Go: an import path by escapes": go('\nimport o "\\x6fs"\n\nfunc init() { o.Exit(0) }\n'),
    "Go: import specs on one line":
        go('\nimport ( "fmt"; o "os" )\n\nfunc init() { fmt.Print(); o.Exit(0) }\n'),
    "Go: a refused package by escapes": go('\nimport "golang.org/x/sys/\\x75nix"\n'),
    "Go: a // inside a string before the exit":
        go('\nimport "os"\n\nfunc init() { _ = "a//"; os . Exit (0) }\n'),
    "C beside Go: a name spliced across lines": c("void l(void) { ex\\\nit(0); }\n"),
    "C beside Go: a universal character name": c("void l(void) { \\u0065xit(0); }\n"),
    "C beside Go: a string ended by a trigraph (on with -std=c99) before a comment's opener":
        c('void l(void) { const char *s = "??/" /* ";\n  exit(0);\n  const char *t = "*/"; }\n'),
    "C beside Go: a line comment spliced by a trigraph (with trigraphs off, the exit is code)":
        c("void l(void) {\n  // x ??/\n  exit(0);\n}\n"),
    "Go: a cgo flag added": (GO, "calc/f.go", GO_START, GO_START.replace('import "strings"',
                                                                       '// #cgo CFLAGS: -std=c99\nimport "strings"')),
}
TAKEN = {  # honest code whose literals or comments hold what a careless decoder would make a refused name of
    "Java: an escaped backslash before u is no escape": java(r'String s = "\\u0053ystem.exit";'),
    "Java: an escape in a string": java(r'String s = "caf\u00e9 \u0041";'),
    "Java: a URL in a string": java('String s = "http://example.com"; int b = a;'),
    "Java: a text block": java('String s = """\n            a "// b\n            """;'),
    "Java: a quote in a char": java("char c = '\"'; String s = \"x\";"),
    "Rust: a raw string and lifetimes": (RUST, "src/lib.rs", RUST_START,
                                         RUST_START + "pub fn g<'a>(x: &'a str) -> &'a str {\n"
                                         "    let _s = r#\"a \"// b\"#;\n    x\n}\n"),
    "Rust: a raw identifier of an ordinary name": rust("let r#type = 1;"),
    "JavaScript: a regular expression holding //": js("const u = /^https?:\\/\\//.test(s);\n"),
    "JavaScript: escapes in strings": js("const s = '\\u00e9\\x41\\n' + \"\\\\u0041\";\n"),
    "JavaScript: a division, then a comment": js("const x = a / b; // process the items\n"),
    "JavaScript: JSX with code and a comment after it":
        js('const el = <div className="a">{xs.map(i => <p key={i}>{i}</p>)}</div>; // process them\n'),
    "JavaScript: a TypeScript type parameter, then a comment": js("const g = <T,>(x) => x; // process it\n"),
    "JavaScript: an object's member divided, then a comment": js("const r = {a: 1}.a / 2; // process it\n"),
    "JavaScript: a template holding a string with an opener": js('const s = `${"/*"}`; // process it\n'),
    "Python: compatibility characters in a string and a comment":
        py("S = '\uff45\uff58\uff45\uff43'  # \uff50ytest\n"),
    "Go: a raw string with quotes": (GO, "calc/f.go", GO_START, GO_START + 'var s = `a "// b`\n'),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_name_spelled_another_way_its_lexer_reads_is_refused(tmp_path: Path, case: tuple) -> None:
    rules, name, start, after = case
    assert why_refused(tmp_path, rules, name, start, after)


@pytest.mark.parametrize("case", TAKEN.values(), ids=TAKEN.keys())
def test_honest_literals_that_hold_escapes_or_markers_are_taken(tmp_path: Path, case: tuple) -> None:
    rules, name, start, after = case
    assert why_refused(tmp_path, rules, name, start, after) is None


def test_java_decodes_unicode_escapes_anywhere_by_the_jls_rule() -> None:
    assert spelling.spelled(r"\u0053ystem\u002eexit", "java") == "System.exit"
    assert spelling.spelled(r"\uuuu0041", "java") == "A"
    assert spelling.spelled(r'"\\u0041"', "java") == r'"\\u0041"'  # the backslash before u is escaped
    assert spelling.spelled(r'"\\\u0041"', "java") == r'"\\A"'  # an even number of backslashes before it
    assert spelling.spelled(r"\u005cu0041", "java") == r"\u0041"  # an escape's backslash begins none
    assert spelling.spelled(r"// a\u000ab", "java") == "// a\nb"
    assert spelling.spelled(r'"\ud83d\ude00" "\ud83d"', "java") == '"\U0001f600" "\\ud83d"'
    assert spelling.spelled('"/pr\\157c"', "java") == '"/proc"'
    assert spelling.spelled('System.`exit`(0); System."exit"(0)', "java") == "System.exit(0); System.exit(0)"


def test_rust_raw_identifiers_are_their_names() -> None:
    assert spelling.spelled("std::r#process::r#exit(0)", "rust") == "std::process::exit(0)"
    assert spelling.spelled('r#"r#exit"#', "rust") == 'r#"r#exit"#'  # a raw string is left as written
    assert spelling.spelled("fn f<'r#a>(x: &'a str) {}", "rust") == "fn f<'a>(x: &'a str) {}"
    assert spelling.spelled('"\\x65\\u{78}it"', "rust") == '"exit"'
    assert spelling.spelled("\u212a", "rust") == "K"  # identifiers are NFC-normalised (the Kelvin sign is K)


def test_javascript_escapes_in_names_and_strings_are_their_characters() -> None:
    assert spelling.spelled(r"pr\u006fcess.\u{65}xit(0)", "js") == "process.exit(0)"
    assert spelling.spelled(r"'child\x5fpro\
cess'", "js") == "'child_process'"
    assert spelling.spelled(r"'\u0027' + `\u0024{x}` + /\x2f/", "js") == r"'\u0027' + `\u0024{x}` + /\x2f/"


def test_python_names_are_nfkc_normalised_outside_literals() -> None:
    assert spelling.spelled("os._\uff45xit(0)\n", "python") == "os._exit(0)\n"
    assert spelling.spelled("s = '\uff45'  # \uff45\n", "python") == "s = '\uff45'  # \uff45\n"


def test_go_import_paths_are_read_as_the_compiler_reads_them() -> None:
    assert go_reach.imports('import (\n\to `os`\n\ts "\\x73yscall"; "fmt"\n)\n') == [
        ("o", "os"), ("s", "syscall"), ("", "fmt")]
    assert "os.Exit(0)" in go_reach.canonical('import o "\\x6fs"\nfunc f() { o.Exit(0) }\n')


def test_comments_are_those_the_lexer_sees() -> None:
    java = 'String s = "a//"; System . exit(0); // gone'
    assert spelling.squeezed(java, "java") == 'String s="a//";System.exit(0);'
    assert spelling.squeezed("x = /[//]/; y = a / b; // gone", "js") == "x=/[//]/;y=a/b;"
    assert spelling.squeezed("x = 1 // 2  # gone\n", "python") == "x=1//2"


def test_the_lexers_regions_follow_the_languages_grammar() -> None:
    def kinds(text: str, language: str) -> list:
        return [(kind, part) for kind, part in spelling.regions(text, language) if kind != "code"]

    assert kinds("a = b / c; // d", "js") == [("comment", "// d")]  # a division
    assert kinds("if (a) /x/.test(s) // d", "js") == [("regex", "/x/"), ("comment", "// d")]
    assert kinds("f(a) / 2 /* d */", "js") == [("comment", "/* d */")]  # a call's value divided
    assert kinds("function f() {}\n/x/g.test(s)", "js") == [("regex", "/x/g")]  # after a block
    assert kinds("x = {a: 1} / 2", "js") == []  # after an object: a division
    assert kinds("x.return / 2 // d", "js") == [("comment", "// d")]  # a keyword as a member is a name
    assert kinds("return /[/*]/.test(s)", "js") == [("regex", "/[/*]/")]
    assert kinds("s = `a${ {b: `/*`}.b }c` // d", "js") == [("template", "`a${ {b: `/*`}.b }c`"),
                                                            ("comment", "// d")]
    assert kinds("x = <a href='/*'>{/* c */}</a> // d", "js") == [("jsx", "x = <a href='/*'>{/* c */}</a>"[4:]),
                                                                 ("comment", "// d")]
    assert spelling.uncommented('of /"/ + "//"', "js") == 'of /"/ + "//"'  # `//` a comment only if of is a name
    assert kinds("x\n  --> a\ny <!-- b\n/* \n */ --> c", "js") == [
        ("comment", "--> a"), ("comment", "<!-- b"), ("comment", "/* \n */"), ("comment", "--> c")]
    assert kinds("a = x! / 2 // c", "js") == [("comment", "// c")]  # TypeScript's non-null x, divided
    assert kinds("a = x\n!/y/.test(s)", "js") == [("regex", "/y/")]
    assert kinds("#!/usr/bin/env node\nx", "js") == [("comment", "#!/usr/bin/env node")]
    assert kinds("x --> a", "js") == []  # not at a line's start: a decrement compared
    assert kinds("x = a < b // d", "js") == [("comment", "// d")]  # a comparison
    assert kinds("s = `open ${", "js") == [("template", "`open ${")]  # unterminated: a literal to the end
    assert kinds('val s = "${"/*"}" // d', "java") == [("string", '"${"/*"}"'), ("comment", "// d")]
    assert kinds("/* a /* b */ c */ d", "rust") == [("comment", "/* a /* b */ c */")]  # Rust's nest
    assert kinds("/* a /* b */ c", "java") == [("comment", "/* a /* b */")]  # Java's do not
    assert spelling.uncommented("/* a /* b */ c */ d", "java") == "  c */ d"  # only what both readings drop
    assert kinds('String s = "${user.home}"; // d', "java") == [("string", '"${user.home}"'), ("comment", "// d")]
