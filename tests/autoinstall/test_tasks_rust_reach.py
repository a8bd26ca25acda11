"""Which Rust tests reach a change, without Docker: doc tests placed by their documentation block (rustdoc's
`FILE - ITEM (line N)`, N the opening fence's line) and selected only for a change their item's code or their
own code reaches."""
from __future__ import annotations

from pathlib import Path

from autoinstall.tasks.candidate import Candidate, mutation_candidate
from autoinstall.tasks.codeindex import CodeIndex
from autoinstall.tasks.doctests import doc_blocks, place
from autoinstall.tasks.staticreach import StaticReach
from envs.task import MutationInfo

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "rust_crate"
LIB = (FIXTURE / "src" / "lib.rs").read_text()
INTEGRATION = (FIXTURE / "tests" / "integration.rs").read_text()
SOURCE = '''//! Versions.
//!
//! ```
//! let v = demo::Version::parse("1.2.3");
//! ```

/// A version.
///
/// ```rust,no_run
/// # use demo::Version;
/// let v = Version::new(1);
/// ```
#[derive(Debug)]
pub struct Version(pub u64);

impl Version {
    /// Makes one.
    ///
    /// ```
    /// assert_eq!(demo::Version::new(3).0, 3);
    /// ```
    ///
    /// ```text
    /// not a test
    /// ```
    pub fn new(n: u64) -> Version {
        Version(n)
    }

    /// Reads one.
    ///
    /// ~~~
    /// assert!(demo::Version::parse("2").0 == 2);
    /// ~~~
    #[inline]
    pub const fn parse(text: &str) -> Version {
        Version::new(digits(text))
    }
}

/// Counts.
/// ```compile_fail
/// demo::digits(1);
/// ```
pub fn digits(text: &str) -> u64 {
    text.len() as u64
}
'''


def mutant(function: str, old: str, new: str, text: str = SOURCE, path: str = "src/lib.rs") -> Candidate:
    return mutation_candidate(MutationInfo(operator="op", file=path, function=function, line=1), text,
                              text.replace(old, new))


def test_a_doc_test_is_the_rust_block_at_its_names_line_and_belongs_to_the_documented_item() -> None:
    blocks = {b.line: b for b in doc_blocks(SOURCE)}
    assert sorted(blocks) == [3, 9, 19, 32, 42]  # the `text` block is no test
    assert [blocks[n].item for n in sorted(blocks)] == ["", "Version", "new", "parse", "digits"]
    assert blocks[9].code.splitlines()[1:] == ["use demo::Version;", "let v = Version::new(1);"]  # `# ` is code
    assert (blocks[32].line, blocks[32].end) == (32, 34)
    assert place("demo-doc::src/lib.rs - Version::new (line 19)") == ("src/lib.rs", 19)
    assert place("alpha-doc::alpha/src/lib.rs - (line 3)") == ("alpha/src/lib.rs", 3)
    assert place("demo-doc::src/lib.rs - digits (line 42) - compile fail") == ("src/lib.rs", 42)
    assert place("demo-lib::tests::adds") is None
    assert place("tests/test_x.py::test_a - b (line 3)") is None


def test_the_index_places_doc_tests_by_file_and_line_never_by_a_word_of_their_name() -> None:
    index = CodeIndex.build({"crates/demo/src/lib.rs": SOURCE}, {})
    new = index.test_function("demo-doc::src/lib.rs - Version::new (line 19)")  # a workspace member's path
    assert new is not None and new.test and new.file == "crates/demo/src/lib.rs" and new.start == 19
    assert {"new", "Version", "assert_eq"} <= new.refs
    assert index.test_function("demo-doc::src/lib.rs - new (line 20)") is None  # no block there
    assert index.test_function("demo-doc::src/other.rs - new (line 19)") is None
    changed = mutant("Version.new", "Version(n)", "Version(n + 1)", path="crates/demo/src/lib.rs")
    assert [f.key for f in index.changed(changed.bug_patch)] == [
        "crates/demo/src/lib.rs::Version.new"]  # a doc block is never the changed function


def test_a_doc_test_runs_for_a_change_its_item_or_its_code_reaches_only() -> None:
    index = CodeIndex.build({"src/lib.rs": SOURCE}, {})
    doc = {line: f"demo-doc::src/lib.rs - {item}(line {line})"
           for line, item in ((3, ""), (9, "Version "), (19, "Version::new "), (32, "Version::parse "),
                              (42, "digits "))}
    reach = StaticReach(index, sorted(doc.values()))
    digits = mutant("digits", "text.len() as u64", "text.len() as u64 + 1")
    assert reach.reaching(digits) == sorted([doc[3], doc[32], doc[42]])  # parse calls digits; the crate's docs parse
    new = mutant("Version.new", "Version(n)", "Version(n + 1)")
    assert reach.reaching(new) == sorted([doc[3], doc[9], doc[19], doc[32]])  # digits's block never calls new


def test_the_fixtures_doc_tests_run_for_their_own_function_only() -> None:
    index = CodeIndex.build({"src/lib.rs": LIB}, {"tests/integration.rs": INTEGRATION})
    passing = ["integration-test::add_is_commutative", "rust_crate-doc::src/lib.rs - add (line 5)",
               "rust_crate-doc::src/lib.rs - at_most (line 25)", "rust_crate-lib::tests::adds", "rust_crate-lib::tests::caps", "rust_crate-lib::tests::formats",
               "rust_crate-lib::tests::shouts"]
    reach = StaticReach(index, passing)
    add = mutant("add", "a + b", "a - b", LIB)
    assert reach.reaching(add) == [*passing[:2], passing[3]]
    at_most = mutant("at_most", "n > max", "n < max", LIB)
    assert reach.reaching(at_most) == ["rust_crate-doc::src/lib.rs - at_most (line 25)", "rust_crate-lib::tests::caps"]


OPERATORS = '''use std::cmp::Ordering;
use std::fmt;
use std::ops::Add;

pub struct Version {
    pub major: u64,
}

pub fn parse(text: &str) -> Version {
    Version { major: text.len() as u64 }
}

pub fn add(a: u64, b: u64) -> u64 {
    a + b
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.major == other.major
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.major.cmp(&other.major)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.major)
    }
}

impl Add for Version {
    type Output = Version;
    fn add(self, other: Version) -> Version {
        Version { major: self.major + other.major }
    }
}
'''
OPERATOR_TESTS = '''use demo::*;

#[test]
fn equal() {
    assert!(parse("1") == parse("1"));
}

#[test]
fn ordered() {
    assert!(parse("1") < parse("22"));
}

#[test]
fn shown() {
    assert_eq!(format!("{}", parse("1")), "1");
}

#[test]
fn summed() {
    let v = parse("1") + parse("2");
    assert!(v.major == 2);
}

#[test]
fn counted() {
    let n = 1 + 2;
    assert!(n > 0);
}

#[test]
fn adds() {
    assert!(add(1, 2) == 3);
}
'''


def test_a_method_an_operator_dispatches_to_is_reached_through_the_operator() -> None:
    """`==` calls every impl's eq, `<` partial_cmp (and through it cmp), `format!` fmt, `+` add, inside a macro's
    arguments too; a free function named like a trait method (`add`) is reached by its name only."""
    index = CodeIndex.build({"src/lib.rs": OPERATORS}, {"tests/version.rs": OPERATOR_TESTS})
    names = ["equal", "ordered", "shown", "summed", "counted", "adds"]
    reach = StaticReach(index, [f"version-test::{n}" for n in names])

    def reaching(function: str, old: str, new: str) -> list[str]:
        assert old in OPERATORS
        return [t.split("::")[1] for t in reach.reaching(mutant(function, old, new, OPERATORS))]

    assert reaching("Version.eq", "self.major == other.major", "self.major != other.major") == [
        "adds", "equal", "shown", "summed"]  # adds and summed compare with ==; assert_eq! does too
    assert reaching("Version.cmp", "self.major.cmp(&other.major)", "other.major.cmp(&self.major)") == [
        "counted", "ordered"]
    assert reaching("Version.fmt", 'write!(f, "{}", self.major)', 'write!(f, "v{}", self.major)') == ["shown"]
    assert reaching("Version.add", "self.major + other.major", "self.major - other.major") == [
        "adds", "counted", "summed"]  # the free add holds a `+` (by name, not type: wider, never narrower)
    assert reaching("add", "    a + b\n", "    a - b\n") == ["adds"]


def test_a_test_id_is_placed_in_the_file_whose_name_it_holds_longest() -> None:
    """cargo's ids start with the test binary, the file's stem: `test_version` is in `test_version_req` too."""
    test = "#[test]\nfn test_parse() {\n    assert!(true);\n}\n"
    index = CodeIndex.build({}, {"tests/test_version.rs": test, "tests/test_version_req.rs": test})
    for stem in ("test_version", "test_version_req"):
        found = index.test_function(f"{stem}-test::test_parse")
        assert found is not None and found.file == f"tests/{stem}.rs"
