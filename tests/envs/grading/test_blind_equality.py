"""The grader's screen of an added equality that never reads the other side (envs/grading/kit/blind_equality.py,
equality_reads.py): a body holding nested blocks is read whole, and naming the other side only to check it
against null or test its type is not reading it, while equalities written as people write them are taken."""
from __future__ import annotations

import pytest

from envs.grading.kit.blind_equality import blind


def java(body: str) -> str:
    return ("package a;\n\nimport java.util.Objects;\n\nfinal class P implements Comparable<P> {\n  int x;\n"
            "  String name;\n\n  @Override\n  public boolean equals(Object o) {\n" + body + "\n  }\n}\n")


def go(body: str, other: str = "o R") -> str:
    return f"package r\n\ntype R struct {{\n\tX    int\n\tTags []string\n}}\n\nfunc (r *R) Equal({other}) bool {{\n{body}\n}}\n"


def rust(body: str) -> str:
    return ("pub struct R(pub i32, pub Vec<u8>);\n\nimpl PartialEq for R {\n    fn eq(&self, other: &Self) -> bool {\n"
            + body + "\n    }\n}\n")


MAKE = {"java": java, "go": go, "rust": rust}
ANY = "other interface{}"
NESTED = {  # a body with a nested block that never reads the other side: before, left to the tests
    "java": ("java", java("    if (x > 0) {\n      return true;\n    }\n    return true;"), "it never names o"),
    "java-null-guard": ("java", java("    if (o == null) { return false; }\n    return true;"),
                        "o is only checked against null"),
    "go": ("go", go("\tif r.X > 0 {\n\t\treturn true\n\t}\n\treturn true"), "it never names o"),
    "rust": ("rust", rust("        if self.0 > 0 { return true; }\n        self.0 == self.0"),
             "it never names other"),
    "java-brace-in-string": ("java", java('    String s = "{ o.x";\n    if (x > 0) { return true; }\n    return true;'),
                             "it never names o"),
}
TYPE_ONLY = {  # the other side named only to check it against null or to test its type
    "java-null": ("java", java("    return o != null;"), "o is only checked against null"),
    "java-instanceof": ("java", java("    return o instanceof P;"), "o is only tested for its type"),
    "java-getClass": ("java", java("    return getClass() == o.getClass();"), "o is only tested for its type"),
    "java-ide-template-without-fields": (
        "java", java("    if (this == o) return true;\n    if (o == null || getClass() != o.getClass()) return false;\n"
                     "    P p = (P) o;\n    return true;"),
        "o (or p, bound from it) is only checked against null, tested for its type and compared with this in an "
        "identity shortcut"),
    "java-pattern-bound": ("java", java("    return o instanceof P that && that != null;"),
                           "o (or that, bound from it) is only checked against null and tested for its type"),
    "go-nil": ("go", go("\treturn other != nil", ANY), "other is only checked against nil"),
    "go-assertion": ("go", go("\t_, ok := other.(*R)\n\treturn ok", ANY), "other is only tested for its type"),
    "go-typeof": ("go", go("\treturn reflect.TypeOf(other) == reflect.TypeOf(r)", ANY),
                  "other is only tested for its type"),
    "go-bound": ("go", go("\tthat, ok := other.(*R)\n\treturn ok && that != nil", ANY),
                 "other (or that, bound from it) is only checked against nil"),
    "rust-matches": ("rust", rust("        self.0 >= 0 && matches!(other, _)"), "other is only tested for its type"),
    "rust-matches-self": ("rust", rust("        matches!(other, Self(..)) && self.0 >= 0"),
                          "other is only tested for its type"),
    "rust-bound": ("rust", rust("        let that = other;\n        self.0 >= 0"),
                   "other (or that, bound from it) is never read"),
    "rust-statement": ("rust", rust("        other;\n        self.0 >= 0"), "other is only dropped"),
}
BOTH = {  # nested blocks and type tests together
    "java-pattern": ("java", java("    if (!(o instanceof P that)) {\n      return false;\n    }\n    return true;"),
                     "o (or that, bound from it) is only tested for its type"),
    "go-type-switch": ("go", go("\tswitch other.(type) {\n\tcase *R:\n\t\treturn true\n\t}\n\treturn false", ANY),
                       "other is only tested for its type"),
    "rust-match": ("rust", rust("        match other { _ => self.0 >= 0 }"), "other is only tested for its type"),
}


@pytest.mark.parametrize("case", [*NESTED.values(), *TYPE_ONLY.values(), *BOTH.values()],
                         ids=[*NESTED, *TYPE_ONLY, *BOTH])
def test_an_equality_that_never_reads_the_other_side_is_refused_saying_which_and_why(case) -> None:
    language, text, why = case
    said = blind(language, "", text)
    assert said is not None and said.endswith(f"answers without looking at what it is compared with: {why}"), said


@pytest.mark.parametrize(("language", "text", "shown"), [
    ("java", java("    return o != null;"), "P.equals(Object o)"),
    ("go", go("\treturn other != nil", ANY), "R.Equal(other interface{})"),
    ("rust", rust("        matches!(other, _)"), "R::eq(&self, other: &Self)"),
    ("java", "class Outer {\n  Object make() {\n    return new Object() {\n      public boolean equals(Object o) {"
             " return true; }\n    };\n  }\n}\n", "equals(Object o) in an anonymous Object"),
])
def test_a_refusal_names_the_method_by_its_type_and_header(language: str, text: str, shown: str) -> None:
    assert (blind(language, "", text) or "").startswith(f"{shown} answers without looking at"), blind(language, "", text)


LOOKS = {
    "java-intellij": java("    if (this == o) return true;\n    if (o == null || getClass() != o.getClass()) return false;\n"
                          "    P p = (P) o;\n    return x == p.x && Objects.equals(name, p.name);"),
    "java-eclipse": java("    if (this == o) {\n      return true;\n    }\n    if (o == null) {\n      return false;\n    }\n"
                         "    if (getClass() != o.getClass()) {\n      return false;\n    }\n    final P other = (P) o;\n"
                         "    if (x != other.x) {\n      return false;\n    }\n    return Objects.equals(name, other.name);"),
    "java-record-style": java("    return o == this || (o instanceof P that && x == that.x && name.equals(that.name));"),
    "java-record-pattern": java("    if (o instanceof P(int a, String b)) {\n      return a == x && b.equals(name);\n    }\n"
                                "    return false;"),
    "java-objects-chain": java("    if (!(o instanceof P)) return false;\n    P p = (P) o;\n"
                               "    return Objects.equals(x, p.x) && Objects.equals(name, p.name);"),
    "java-generic-cast": java("    if (!(o instanceof java.util.Map.Entry<?, ?>)) { return false; }\n"
                              "    java.util.Map.Entry<?, ?> e = (java.util.Map.Entry<?, ?>) o;\n"
                              "    return Objects.equals(name, e.getKey());"),
    "java-cast-member": java("    return o instanceof P && ((P) o).x == x;"),
    "java-compareTo": java("    return o instanceof P && compareTo((P) o) == 0;"),
    "java-toString": java("    return this.toString().equals(o.toString());"),
    "java-identity": java("    return o == this;"),
    "java-brace-in-string": java('    if (name.startsWith("{")) { return false; }\n'
                                 '    return o instanceof P && name.equals(((P) o).name);'),
    "go-fields": go("\treturn r.X == o.X"),
    "go-loop": go("\tif r.X != o.X || len(r.Tags) != len(o.Tags) {\n\t\treturn false\n\t}\n"
                  "\tfor i := range r.Tags {\n\t\tif r.Tags[i] != o.Tags[i] {\n\t\t\treturn false\n\t\t}\n\t}\n\treturn true"),
    "go-nil-guards": go("\tif r == o {\n\t\treturn true\n\t}\n\tif r == nil || o == nil {\n\t\treturn false\n\t}\n"
                        "\treturn r.X == o.X", "o *R"),
    "go-asserted": go("\tthat, ok := other.(*R)\n\tif !ok || that == nil {\n\t\treturn false\n\t}\n\treturn r.X == that.X",
                      ANY),
    "go-type-switch": go("\tswitch o := other.(type) {\n\tcase *R:\n\t\treturn r.X == o.X\n\tcase int:\n"
                         "\t\treturn r.X == o\n\t}\n\treturn false", ANY),
    "go-value": go("\treturn *r == o"),
    "rust-fields": rust("        self.0 == other.0 && self.1 == other.1"),
    "rust-tuple-field": rust("        self.0 == other.0"),
    "rust-derive-like": rust("        match (self, other) {\n            (R(a, _), R(b, _)) if a == b => true,\n"
                             "            _ => false,\n        }"),
    "rust-destructured": rust("        let Self(b, v) = other;\n        self.0 == *b && &self.1 == v"),
    "rust-zip": rust("        self.1.iter().zip(other.1.iter()).all(|(a, b)| a == b)"),
    "rust-shortcut": rust("        if std::ptr::eq(self, other) {\n            return true;\n        }\n"
                          "        self.0 == other.0"),
    "rust-cmp": rust("        self.0.cmp(&other.0) == std::cmp::Ordering::Equal"),
}


@pytest.mark.parametrize("text", LOOKS.values(), ids=LOOKS.keys())
def test_an_equality_that_reads_the_other_side_is_taken(text: str) -> None:
    language = text.startswith("package a") and "java" or text.startswith("package r") and "go" or "rust"
    assert blind(language, "", text) is None


@pytest.mark.parametrize("language", ["go", "rust", "kotlin"])
def test_other_comparisons_are_left_to_the_tests(language: str) -> None:
    """Go's and Rust's other orderings that read both sides, and a language the screen does not read."""
    text = {"go": "package r\n\nfunc (a V) Compare(b V) int {\n\tswitch {\n\tcase a.N < b.N:\n\t\treturn -1\n"
                  "\tcase a.N > b.N:\n\t\treturn 1\n\t}\n\treturn 0\n}\n",
            "rust": "impl PartialOrd for V {\n    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {\n"
                    "        Some(self.cmp(other))\n    }\n}\n",
            "kotlin": "override fun equals(other: Any?) = true\n"}[language]
    assert blind(language, "", text) is None


def test_a_method_the_start_held_as_it_is_is_not_the_agents() -> None:
    start = java("    if (x > 0) {\n      return true;\n    }\n    return o != null;")
    assert blind("java", start, start.replace("int x;", "int x;\n  int y;")) is None
    changed = start.replace("x > 0", "x > 1")
    assert "P.equals(Object o)" in (blind("java", start, changed) or "")


def test_a_method_the_start_held_in_another_type_is_the_agents() -> None:
    start = "class Probe {\n  public boolean equals(Object o) { return true; }\n}\n\nclass P {\n  int x;\n}\n"
    moved = start.replace("  int x;\n", "  int x;\n\n  public boolean equals(Object o) { return true; }\n")
    assert (blind("java", start, moved) or "").startswith("P.equals(Object o) answers without looking at")
