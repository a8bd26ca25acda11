"""Whether the grader's JavaScript lexer ever takes live code for a comment (envs/grading/kit/scanners.py,
spelling.py `in_every_reading`), measured against a real parser: acorn (installed into a cache folder from the
npm registry) reads every JavaScript file under the given folders (default: the host's global node_modules),
as a script or else as a module, and reports its comments; every character the screens would drop as a comment
must lie in one of them. Runs on the host: the files are the host's own packages, never a repository's.

    uv run python bench/lexer_soundness.py [--root DIR ...] [--max-files 4000]

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
    parser.add_argument("--root", action="append", help="a folder of JavaScript files (repeatable)")
    parser.add_argument("--max-files", type=int, default=4000)
    args = parser.parse_args()
    files = sorted(str(p) for root in (args.root or ROOTS) if Path(root).is_dir()
                   for p in Path(root).rglob("*.js") if p.is_file() and p.stat().st_size < 400_000)
    files = files[:args.max_files]
    out = subprocess.run(["node", "-e", READER], input="\n".join(files), capture_output=True, text=True,
                         check=True, env={**os.environ, "NODE_PATH": str(acorn() / "node_modules")}).stdout
    parsed = dropped = kept = 0
    wrong: list = []
    for line in out.splitlines():
        record = json.loads(line)
        if record["comments"] is None:
            continue
        parsed += 1
        text = Path(record["file"]).read_text(encoding="utf-8", errors="replace")
        truth = comment_mask(text, record["comments"])
        ours = in_every_reading(text, "js", "comment")
        dropped += sum(ours)
        kept += sum(t and not o for o, t in zip(ours, truth))
        bad = next((i for i, (o, t) in enumerate(zip(ours, truth)) if o and not t), None)
        if bad is not None:
            wrong.append(record["file"])
            print(f"code taken for a comment in {record['file']}: {text[max(0, bad - 60):bad + 60]!r}")
    print(json.dumps({"files": len(files), "parsed": parsed, "comment_chars_dropped": dropped,
                      "files_with_code_dropped": len(wrong), "comment_chars_kept": kept}))


if __name__ == "__main__":
    main()
