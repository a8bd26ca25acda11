"""Whether the grader's lexers ever take live code for a comment (envs/grading/kit/scanners.py, spelling.py
`in_every_reading`), measured against the languages' own: for JavaScript, acorn (installed into a cache folder
from the npm registry) reads every file under the given folders (default: the host's global node_modules), as
a script or else as a module; for Go, go/scanner (a small program built with the host's Go) reads the host's
GOROOT/src. Every character the screens would drop as a comment must lie in one of their comments. Runs on the
host: the files are the host's own, never a repository's.

    uv run python bench/lexer_soundness.py [--language js|go] [--root DIR ...] [--max-files 4000]

Prints one JSON line: files, parsed, comment_chars_dropped, files_with_code_dropped (target 0),
comment_chars_kept (comments every reading did not agree on: screened as code).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs.grading.kit.spelling import in_every_reading  # noqa: E402

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "autoinstall" / "bench-acorn"
ROOTS = ("/usr/lib/node_modules", "/usr/local/lib/node_modules")
READER = r"""
const fs = require('fs');
const acorn = require('acorn');
for (const file of fs.readFileSync(0, 'utf8').split('\n').filter(Boolean)) {
  let comments = null;
  for (const sourceType of ['script', 'module']) {
    const found = [];
    try {
      acorn.parse(fs.readFileSync(file, 'utf8'), {ecmaVersion: 'latest', sourceType, allowHashBang: true,
        allowReturnOutsideFunction: true, onComment: (block, text, start, end) => found.push([start, end])});
      comments = found;
      break;
    } catch (e) {}
  }
  process.stdout.write(JSON.stringify({file, comments}) + '\n');
}
"""


GO_READER = """package main

import (
\t"bufio"
\t"encoding/json"
\t"go/scanner"
\t"go/token"
\t"os"
\t"unicode/utf16"
)

func main() {
\tin := bufio.NewScanner(os.Stdin)
\tout := json.NewEncoder(os.Stdout)
\tfor in.Scan() {
\t\tsrc, err := os.ReadFile(in.Text())
\t\tif err != nil {
\t\t\tcontinue
\t\t}
\t\tfset := token.NewFileSet()
\t\tf := fset.AddFile(in.Text(), fset.Base(), len(src))
\t\tvar s scanner.Scanner
\t\tbad := false
\t\ts.Init(f, src, func(token.Position, string) { bad = true }, scanner.ScanComments)
\t\tspans := [][2]int{}
\t\tfor {
\t\t\tpos, tok, lit := s.Scan()
\t\t\tif tok == token.EOF {
\t\t\t\tbreak
\t\t\t}
\t\t\tif tok == token.COMMENT { // offsets in UTF-16 units, as acorn's
\t\t\t\tstart := len(utf16.Encode([]rune(string(src[:f.Offset(pos)]))))
\t\t\t\tspans = append(spans, [2]int{start, start + len(utf16.Encode([]rune(lit)))})
\t\t\t}
\t\t}
\t\tif bad {
\t\t\tout.Encode(map[string]any{"file": in.Text(), "comments": nil})
\t\t} else {
\t\t\tout.Encode(map[string]any{"file": in.Text(), "comments": spans})
\t\t}
\t}
}
"""


def go_reader() -> list:
    """The command that prints Go's comments (built on first use)."""
    folder = CACHE.with_name("bench-goscanner")
    binary = folder / "goscanner"
    if not binary.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "main.go").write_text(GO_READER)
        (folder / "go.mod").write_text("module goscanner\n\ngo 1.21\n")
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=folder, check=True, capture_output=True)
    return [str(binary)]


def acorn() -> Path:
    """The folder holding node_modules/acorn (installed on first use)."""
    if not (CACHE / "node_modules" / "acorn").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "acorn@8"],
                       check=True, capture_output=True, text=True)
    return CACHE


def comment_mask(text: str, spans: list) -> list:
    """Per character, whether acorn's comment spans (UTF-16 offsets) hold it."""
    index = []
    for i, ch in enumerate(text):
        index += [i, i] if ord(ch) > 0xFFFF else [i]
    index.append(len(text))
    mask = [False] * len(text)
    for start, end in spans:
        for k in range(index[start], index[min(end, len(index) - 1)]):
            mask[k] = True
    return mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", choices=("js", "go"), default="js")
    parser.add_argument("--root", action="append", help="a folder of source files (repeatable)")
    parser.add_argument("--max-files", type=int, default=4000)
    args = parser.parse_args()
    if args.language == "go":
        goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
        roots, suffix, reader, env = args.root or [f"{goroot}/src"], "*.go", go_reader(), dict(os.environ)
    else:
        roots, suffix, reader = args.root or ROOTS, "*.js", ["node", "-e", READER]
        env = {**os.environ, "NODE_PATH": str(acorn() / "node_modules")}
    files = sorted(str(p) for root in roots if Path(root).is_dir()
                   for p in Path(root).rglob(suffix) if p.is_file() and p.stat().st_size < 400_000)
    files = files[:args.max_files]
    out = subprocess.run(reader, input="\n".join(files), capture_output=True, text=True, check=True,
                         env=env).stdout
    parsed = dropped = kept = 0
    wrong: list = []
    for line in out.splitlines():
        record = json.loads(line)
        if record["comments"] is None:
            continue
        parsed += 1
        text = Path(record["file"]).read_text(encoding="utf-8", errors="replace")
        truth = comment_mask(text, record["comments"])
        ours = in_every_reading(text, args.language, "comment")
        dropped += sum(ours)
        kept += sum(t and not o for o, t in zip(ours, truth))
        bad = next((i for i, (o, t) in enumerate(zip(ours, truth)) if o and not t), None)
        if bad is not None:
            wrong.append(record["file"])
            print(f"code taken for a comment in {record['file']}: {text[max(0, bad - 60):bad + 60]!r}")
    print(json.dumps({"language": args.language, "files": len(files), "parsed": parsed, "comment_chars_dropped": dropped,
                      "files_with_code_dropped": len(wrong), "comment_chars_kept": kept}))


if __name__ == "__main__":
    main()
