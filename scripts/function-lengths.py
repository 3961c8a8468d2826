#!/usr/bin/env python3
"""Lists the longest functions in the production Rust code of the workspace.

    scripts/function-lengths.py [--min N] [ROOT]

Production code is every `*.rs` under the `src/` of each host crate (`host/*/src`,
the CLI's `host/cli/src` among them), `proto/src` and `guest-sdk/src`, without `#[cfg(test)]`
modules and `*_tests.rs` files (test-only modules); the test-support crates (`host/fixtures`,
`host/fuzz`: their description starts "Test support") are not production. A function's length is
its line count from the `fn` line to its closing brace. Prints `lines  path:line  name`,
longest first, for functions of at least N lines (default 40), and flags those
over 60 lines whose doc comment does not say why (a line containing "long"); exits 1 when any is
flagged (`scripts/test.sh` runs it).
"""
import re
import sys
from pathlib import Path

args = sys.argv[1:]
minimum = 40
if args[:1] == ["--min"]:
    minimum = int(args[1])
    args = args[2:]
root = Path(args[0] if args else Path(__file__).resolve().parent.parent)
def test_support(crate):
    """A crate only tests use: its description says so ("Test support: ...")."""
    manifest = (crate / "Cargo.toml").read_text()
    return re.search(r'^description = "Test support', manifest, flags=re.M) is not None


dirs = sorted(
    str(p.relative_to(root)) for p in (root / "host").glob("*/src") if not test_support(p.parent)
) + ["proto/src", "guest-sdk/src"]
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+([A-Za-z0-9_]+)")

def strip(line):
    """Drops string literals and comments so braces in them are not counted."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]

rows = []
for d in dirs:
    base = root / d
    if not base.is_dir():
        continue
    for path in sorted(base.rglob("*.rs")):
        if path.name.endswith("_tests.rs"):
            continue  # a test-only module (declared under #[cfg(test)])
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"^\s*#\[cfg\(test\)\]", lines[i]):
                break  # test modules sit at the end of a file
            m = FN.match(lines[i])
            if not m:
                i += 1
                continue
            depth, start, j, opened = 0, i, i, False
            while j < len(lines):
                s = strip(lines[j])
                if not opened and ";" in s and "{" not in s:
                    break  # a declaration without a body
                depth += s.count("{") - s.count("}")
                opened = opened or "{" in s
                if opened and depth <= 0:
                    break
                j += 1
            length = j - start + 1
            doc = []
            k = start - 1
            while k >= 0 and (lines[k].strip().startswith("///") or lines[k].strip().startswith("#[")):
                doc.append(lines[k])
                k -= 1
            reasoned = any("long" in l.lower() for l in doc)
            rows.append((length, f"{path.relative_to(root)}:{start + 1}", m.group(6), reasoned))
            i = j + 1 if opened else i + 1

rows.sort(reverse=True)
over = 0
for length, where, name, reasoned in rows:
    if length < minimum:
        break
    flag = ""
    if length > 60:
        flag = "  (reason in doc)" if reasoned else "  OVER 60, NO REASON"
        over += 0 if reasoned else 1
    print(f"{length:4}  {where}  {name}{flag}")
print(f"functions over 60 lines without a reason: {over}")
sys.exit(1 if over else 0)
