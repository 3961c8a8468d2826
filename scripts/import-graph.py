#!/usr/bin/env python3
"""The workspace's structure as its own imports draw it.

    scripts/import-graph.py [--edges] [--json]

For every Rust crate of the workspace (the `members` of Cargo.toml, examples and
test guests aside), it reads each production file under `src/`, resolves every
`crate::`, `super::`, `self::` path, every path through a child module, and every
path into another crate of the workspace, to the file that defines the module it
names, and prints:

- one line per crate: its package name, its production line count (lines before
  a file's `#[cfg(test)]` block), the workspace crates it depends on, and its
  public items (the names its `lib.rs` makes reachable from outside);
- the import circles: sets of files that import each other, directly or
  through others (strongly connected components of more than one file), inside a
  crate or across crates;
- the dependencies each crate may not have, checked with `cargo tree` (the
  runtime has no tonic, the provisioning crate no wasmtime, ...: [`FORBIDDEN`]);
- the production files longer than 450 lines (before their tests), which
  should be split by job;
- the crates with more than one test target (`cargo metadata`): a crate's integration tests are
  one binary, `tests/all/main.rs` and its modules (`autotests = false`), as wasmtime's crates
  keep theirs, so each links its dependencies once;
- the test-only modules (`#[cfg(test)] mod x;`) not named `*_tests` (`x_tests.rs`), and the
  modules so named that are not test-only: a file's name says whether it ships; test-only
  files are not production (nor counted as such);
- the `lib.rs` files that define items of their own (a function, a type, an
  `impl`, a constant, a macro): a library's `lib.rs` only declares its modules
  and re-exports its public face, but for those in [`LIB_RS_EXCEPTIONS`];
- with `--edges`, every file-to-file edge.

A module's `mod child;` declaration is not counted as an import (it is how
Rust lays files out); a parent that *uses* its child's items is.

It exits 1 when there is any circle, forbidden dependency, long file, crate with more than one
test target, misnamed test-only file or `lib.rs` holding code,
so it can guard CI
(`scripts/test.sh` runs it).
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP_PREFIXES = ("examples/", "host/cli/tests/", "guest-sdk")
MAX_FILE_LINES = 450
# The libraries whose lib.rs still holds code of its own, and why (docs/architecture.md says
# the same); one that no longer does is named in the report, to be taken off this list.
LIB_RS_EXCEPTIONS: dict[str, str] = {}
# An item a lib.rs defines (declarations and re-exports are not items).
LIB_RS_ITEM = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern)\s+)*"
    r"(?:fn|struct|enum|union|impl|static|trait|type|macro_rules!)\b(?:\s*[\w<>:]+)?"
    r"|^\s*(?:pub(?:\([^)]*\))?\s+)?const\s+\w+\s*:",
    flags=re.M,
)
# What each crate may not depend on, directly or not (normal dependencies).
FORBIDDEN = {
    "azd-wasm-host-core": [
        "tonic",
        "wasmtime",
        "azd-wasm-host-runtime",
        "azd-wasm-host-provisioning",
    ],
    # Manifests and policies are plain data: no engine, no gRPC, no other crate of ours but core.
    "azd-wasm-host-manifest": [
        "tonic",
        "wasmtime",
        "azd-wasm-host-runtime",
        "azd-wasm-host-provisioning",
        "azd-wasm-host-trust",
    ],
    "azd-wasm-host-runtime": [
        "tonic",
        "azd-wasm-host-provisioning",
        "azd-wasm-host-author",
        "azd-wasm-host-recorder",
    ],
    "azd-wasm-host-provisioning": [
        "wasmtime",
        "azd-wasm-host-runtime",
        "azd-wasm-host-author",
        "azd-wasm-host-recorder",
    ],
    "azd-wasm-host-author": ["tonic", "azd-wasm-host-provisioning", "azd-wasm-host-recorder"],
    "azd-wasm-host-sim": ["wasmtime", "azd-wasm-host-core"],
    # Signatures and consent read manifests, never run them: no engine, no compiler, no network.
    "azd-wasm-host-trust": [
        "tonic",
        "reqwest",
        "wasmtime",
        "azd-wasm-host-runtime",
        "azd-wasm-host-provisioning",
        "azd-wasm-host-author",
        "cranelift-codegen",
        "wasmtime-internal-winch",
    ],
    # The shipped sidecar: no compiler, no recorder (nor the decoders it undoes a recorded body's
    # content coding with), no author's toolchain, no simulated azd, none of the development
    # CLI's commands.
    "azd-wasm-host-sidecar": [
        "azd-wasm-host-author",
        "azd-wasm-host-recorder",
        "brotli",
        "ruzstd",
        "quick-xml",
        "azd-wasm-host-runner",
        "azd-wasm-host-testkit",
        "azd-wasm-host-watch",
        "azd-wasm-host-sim",
        "oci-client",
        "notify",
        "cranelift-codegen",
        "wasmtime-internal-winch",
        "wasmtime-internal-cranelift",
    ],
    # The runner plays azd: it drives the extension as a process (the program its session names)
    # and runs no component itself; whether one is compiled is the development CLI's to say.
    "azd-wasm-host-runner": [
        "azd-wasm-host-author",
        "azd-wasm-host-recorder",
        "azd-wasm-host-sidecar",
        "azd-wasm-host-runtime",
        "wasmtime",
    ],
    # The test kit plays steps through the runner and is handed the compile cache; it starts
    # the extension, never serves it.
    "azd-wasm-host-testkit": ["azd-wasm-host-sidecar"],
    # The recorder answers the development seam (`azd-wasm-host-develop`) without the sidecar.
    "azd-wasm-host-recorder": ["azd-wasm-host-sidecar"],
    # The seam between them links neither side.
    "azd-wasm-host-develop": ["azd-wasm-host-sidecar", "azd-wasm-host-recorder"],
}


@dataclass(eq=False)
class Module:
    crate: str
    path: tuple[str, ...]  # module path inside its crate ("" for the root)
    file: Path
    children: set[str] = field(default_factory=set)


TOKEN = re.compile(
    r"""//[^\n]*|/\*.*?\*/|r(#*)"(?:.|\n)*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\.|[^'\\])'""",
    flags=re.S,
)


def strip_comments_and_strings(text: str) -> str:
    """Code only: comments dropped, string and character literals emptied (one pass, in order)."""

    def repl(m: re.Match[str]) -> str:
        t = m.group(0)
        return "" if t.startswith("/") else '""'

    return TOKEN.sub(repl, text)


def production_part(text: str) -> str:
    """The file before its `#[cfg(test)] mod tests` block (tests are not production)."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod\s+\w+\s*\{", text, flags=re.M)
    return text[: m.start()] if m else text


def crate_members() -> list[tuple[str, Path]]:
    ws = tomllib.loads((ROOT / "Cargo.toml").read_text())
    out = []
    for member in ws["workspace"]["members"]:
        if member.startswith(SKIP_PREFIXES):
            continue
        manifest = tomllib.loads((ROOT / member / "Cargo.toml").read_text())
        out.append((manifest["package"]["name"], ROOT / member))
    return out


# Test-only file modules not named `*_tests`, and `*_tests` modules that are not test-only.
MISNAMED: list[str] = []


def discover(crate: str, src: Path) -> dict[tuple[str, ...], Module]:
    """Every module of a crate, from its roots (lib.rs and main.rs are separate trees)."""
    modules: dict[tuple[str, ...], Module] = {}

    def walk(path: tuple[str, ...], file: Path, dir_for_children: Path) -> None:
        mod = Module(crate, path, file)
        modules[path] = mod
        text = strip_comments_and_strings(file.read_text())
        for m in re.finditer(
            r"^(\s*#\[cfg\(test\)\]\s*\n)?(?:\s*#\[path\s*=[^\]]*\]\s*\n)?\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text, flags=re.M
        ):
            test_only, name = m.group(1) is not None, m.group(2)
            if test_only != name.endswith("_tests"):
                # A test-only file is named `*_tests.rs`, and only a test-only file is.
                MISNAMED.append(f"{rel(file)}: mod {name}" + (" (test-only)" if test_only else ""))
            if test_only:
                continue  # tests are not production
            mod.children.add(name)
            for cand, sub in (
                (dir_for_children / f"{name}.rs", dir_for_children / name),
                (dir_for_children / name / "mod.rs", dir_for_children / name),
            ):
                if cand.exists():
                    walk(path + (name,), cand, sub)
                    break

    for root_name in ("lib.rs", "main.rs"):
        root = src / root_name
        if root.exists():
            prefix = () if root_name == "lib.rs" else ("<bin>",)
            walk(prefix, root, src)
    return modules


def expand_use(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` → [`a::b`, `a::c::d`, `a::c::e`]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def split_top(s: str) -> list[str]:
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        return parts

    def rec(s: str) -> list[str]:
        i = s.find("{")
        if i < 0:
            return [s]
        head, inner = s[:i], s[i + 1 : s.rfind("}")]
        out = []
        for part in split_top(inner):
            for tail in rec(part):
                out.append(head + tail if tail != "self" else head.rstrip(":"))
        return out

    return [p for p in rec(tree) if p]


def paths_in(text: str, children: set[str]) -> list[str]:
    """Every path the code names: in `use` trees, and inline (`crate::x::f()`,
    `super::X`, `child::f()` for a child module of the file, another crate's)."""
    text = strip_comments_and_strings(text)
    found = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        for p in expand_use(m.group(1)):
            found.append(p)
    roots = ["crate", "super", "self", r"azd_wasm_host\w*"] + sorted(children)
    inline = r"(?<![\w:])((?:" + "|".join(roots) + r")(?:::\w+)+)"
    for m in re.finditer(inline, text):
        found.append(m.group(1))
    return found


def build_graph():
    crates = crate_members()
    lib_names = {name.replace("-", "_"): name for name, _ in crates}
    all_modules: dict[tuple[str, tuple[str, ...]], Module] = {}
    for name, dir_ in crates:
        for path, mod in discover(name, dir_ / "src").items():
            all_modules[(name, path)] = mod

    def longest_module(crate: str, segs: list[str]) -> tuple[str, tuple[str, ...]] | None:
        for n in range(len(segs), -1, -1):
            key = (crate, tuple(segs[:n]))
            if key in all_modules:
                return key
        return None

    edges: set[tuple[Module, Module]] = set()
    for (crate, path), mod in all_modules.items():
        text = production_part(mod.file.read_text())
        base = path[:1] if path[:1] == ("<bin>",) else ()
        for p in paths_in(text, mod.children):
            segs = p.split("::")
            target_crate, rest = crate, None
            if segs[0] == "crate":
                rest = list(base) + segs[1:]
            elif segs[0] == "self":
                rest = list(path) + segs[1:]
            elif segs[0] == "super":
                up = list(path)
                while segs and segs[0] == "super":
                    up = up[:-1]
                    segs = segs[1:]
                rest = up + segs
            elif segs[0] in lib_names and lib_names[segs[0]] != crate or (
                segs[0] in lib_names and path[:1] == ("<bin>",)
            ):
                target_crate, rest = lib_names[segs[0]], segs[1:]
            elif segs[0] in mod.children:
                rest = list(path) + segs
            if rest is None:
                continue
            key = longest_module(target_crate, rest)
            if key is None:
                continue
            target = all_modules[key]
            if target is not mod:
                edges.add((mod, target))
    return crates, all_modules, edges


def circles(nodes, edges) -> list[list[Module]]:
    """Tarjan's strongly connected components of more than one node."""
    succ: dict[int, list[Module]] = {id(n): [] for n in nodes}
    for a, b in edges:
        succ[id(a)].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[id(v)] = low[id(v)] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(id(v))
        for w in succ[id(v)]:
            if id(w) not in index:
                strong(w)
                low[id(v)] = min(low[id(v)], low[id(w)])
            elif id(w) in on:
                low[id(v)] = min(low[id(v)], index[id(w)])
        if low[id(v)] == index[id(v)]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(id(w))
                comp.append(w)
                if w is v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for n in nodes:
        if id(n) not in index:
            strong(n)
    return out


def public_items(lib: Path) -> list[str]:
    if not lib.exists():
        return []
    text = strip_comments_and_strings(lib.read_text())
    names = []
    for m in re.finditer(r"^pub\s+use\s+([^;]+);", text, flags=re.M):
        for p in expand_use(m.group(1)):
            names.append(p.split("::")[-1])
    for m in re.finditer(
        r"^pub\s+(?:async\s+)?(?:fn|struct|enum|trait|const|static|type|mod)\s+(\w+)", text, flags=re.M
    ):
        names.append(m.group(1))
    return names


def forbidden_dependencies() -> list[str]:
    """`crate -> dependency` for every dependency FORBIDDEN names that `cargo tree` finds."""
    import subprocess

    found = []
    for crate, banned in FORBIDDEN.items():
        tree = subprocess.run(
            ["cargo", "tree", "-p", crate, "-e", "normal", "--prefix", "none"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
        names = {line.split(" ")[0] for line in tree.splitlines() if line}
        found += [f"{crate} -> {dep}" for dep in banned if dep in names]
    return found


def test_targets() -> dict[str, list[str]]:
    """Each workspace package with more than one test target, and those targets' names."""
    import subprocess

    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout
    )
    many = {}
    for package in meta["packages"]:
        tests = [t["name"] for t in package["targets"] if "test" in t["kind"]]
        if len(tests) > 1:
            many[package["name"]] = sorted(tests)
    return many


def lib_rs_items(lib: Path) -> list[str]:
    """The items `lib` defines itself, as the lines that start them (its tests aside)."""
    if not lib.exists():
        return []
    text = strip_comments_and_strings(production_part(lib.read_text()))
    return [m.group(0).strip() for m in LIB_RS_ITEM.finditer(text)]


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def main() -> int:
    crates, modules, edges = build_graph()
    report = {
        "crates": [],
        "circles": [],
        "long_files": [],
        "forbidden": forbidden_dependencies(),
        "lib_rs_code": [],
        "lib_rs_exceptions_unused": [],
        "test_targets": test_targets(),
        "misnamed_tests": MISNAMED,
    }
    for name, dir_ in crates:
        files = sorted({m.file for m in modules.values() if m.crate == name})
        lines = sum(production_part(f.read_text()).count("\n") for f in files)
        manifest = tomllib.loads((dir_ / "Cargo.toml").read_text())
        deps = sorted(d for d in manifest.get("dependencies", {}) if d in {n for n, _ in crates})
        report["crates"].append(
            {
                "crate": name,
                "dir": rel(dir_),
                "lines": lines,
                "depends_on": deps,
                "public": public_items(dir_ / "src" / "lib.rs"),
            }
        )
    for name, dir_ in crates:
        items = lib_rs_items(dir_ / "src" / "lib.rs")
        if items and name not in LIB_RS_EXCEPTIONS:
            report["lib_rs_code"].append({"crate": name, "items": items})
        elif not items and name in LIB_RS_EXCEPTIONS:
            report["lib_rs_exceptions_unused"].append(name)
    for m in sorted(modules.values(), key=lambda m: str(m.file)):
        n = production_part(m.file.read_text()).count("\n")
        if n > MAX_FILE_LINES and "fixtures" not in m.crate:
            report["long_files"].append({"file": rel(m.file), "lines": n})
    for comp in circles(list(modules.values()), edges):
        report["circles"].append(sorted(rel(m.file) for m in comp))
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
    else:
        print("crates (production lines; workspace dependencies; public items):")
        for c in report["crates"]:
            deps = ", ".join(c["depends_on"]) or "-"
            pub = ", ".join(c["public"]) or "-"
            print(f"  {c['crate']} ({c['dir']}): {c['lines']} lines; uses {deps}")
            print(f"      public ({len(c['public'])}): {pub}")
        print(f"import circles: {len(report['circles'])}")
        for comp in report["circles"]:
            print("  " + " <-> ".join(comp))
        print(f"forbidden dependencies: {len(report['forbidden'])}")
        for f in report["forbidden"]:
            print(f"  {f}")
        print(f"production files over {MAX_FILE_LINES} lines: {len(report['long_files'])}")
        for f in report["long_files"]:
            print(f"  {f['file']}: {f['lines']}")
        print(f"crates with more than one test target: {len(report['test_targets'])}")
        for name, tests in report["test_targets"].items():
            print(f"  {name}: {len(tests)} ({', '.join(tests)})")
        print(f"test-only files not named *_tests.rs (or so named and not test-only): {len(MISNAMED)}")
        for m in MISNAMED:
            print(f"  {m}")
        print(f"lib.rs holding code of its own: {len(report['lib_rs_code'])}")
        for c in report["lib_rs_code"]:
            print(f"  {c['crate']}: " + "; ".join(c["items"]))
        for name in report["lib_rs_exceptions_unused"]:
            print(f"  ({name}'s lib.rs holds no code now: take it off LIB_RS_EXCEPTIONS)")
        if "--edges" in sys.argv:
            for a, b in sorted((rel(a.file), rel(b.file)) for a, b in edges):
                print(f"  {a} -> {b}")
    failed = report["circles"] or report["long_files"] or report["forbidden"] or report["test_targets"] or MISNAMED
    return 1 if failed or report["lib_rs_code"] else 0


if __name__ == "__main__":
    sys.exit(main())
