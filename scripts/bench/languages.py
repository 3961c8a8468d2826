#!/usr/bin/env python3
"""The language table: each language's provider component, its size, and the first
Initialize on an empty compile cache (it waits for the compile) and on a warm one.

    scripts/bench/languages.py HOST_BINARY WORK_DIR [RUNS]

Each provider is driven by `HOST run provision --debug` in a project of its own; the
Initialize time is the host's own `answered … kind=initialize micros=N` debug line (the
handler's time, compile wait included), so process start and azd's side are left out.
Cold: a fresh AZD_WASM_HOST_CACHE_DIR per run (median of RUNS // 2, at least 2); warm: the
same cache again (median of RUNS). JavaScript (ComponentizeJS), TypeScript and Go are new
projects `new js` / `new ts` / `new go` builds (npm installs their pinned tools); the others are the
repository's examples, built by scripts/build-examples.sh and scripts/build-rust-example.sh.
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANSWERED = re.compile(r"answered .*kind\W*=\W*initialize .*micros\W*=\W*(\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def initialize_micros(host, manifest, project, cache):
    env = dict(os.environ, AZD_WASM_HOST_CACHE_DIR=str(cache))
    env.pop("AZURE_ENV_NAME", None)
    out = subprocess.run([host, "run", "provision", "--debug", "-p", str(manifest)], cwd=project,
                         env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"run provision failed for {manifest}:\n{out.stdout}\n{out.stderr[-3000:]}")
    found = ANSWERED.search(ANSI.sub("", out.stderr))
    if not found:
        sys.exit(f"no Initialize time in the debug log of {manifest}")
    return int(found.group(1))


def project_for(work, name, provider, config_yaml):
    project = work / f"project-{name}"
    project.mkdir(parents=True, exist_ok=True)
    (project / "azure.yaml").write_text(f"name: bench-{name}\ninfra:\n  provider: {provider}\n  config: {config_yaml}\n")
    return project


def new_project(host, work, language, name):
    subprocess.run([host, "new", language, name], cwd=work, check=True, capture_output=True)
    built = subprocess.run([host, "build"], cwd=work / name, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"build of a new {language} project failed:\n{built.stderr[-3000:]}")
    return work / name / "provider.toml"


def main():
    host, work = str(Path(sys.argv[1]).resolve()), Path(sys.argv[2]).resolve()
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    work.mkdir(parents=True, exist_ok=True)
    subjects = [
        ("C", ROOT / "examples/c-hello/provider.toml", "c-hello", "{ name: world }"),
        ("Rust", ROOT / "examples/rust-hello/provider.toml", "rust-hello", "{ name: world }"),
        ("JavaScript, QuickJS (`engine = \"quickjs\"`)", ROOT / "examples/js-hello/provider.toml", "js-hello", "{ name: world }"),
        ("JavaScript, ComponentizeJS (`new js`)", new_project(host, work, "js", "bench-js"), "bench-js", "{ name: world }"),
        ("TypeScript (`new ts`)", new_project(host, work, "ts", "bench-ts"), "bench-ts", "{ name: world }"),
        ("Go (`new go`)", new_project(host, work, "go", "bench-go"), "bench-go", "{ name: world }"),
    ]
    python = ROOT / "examples/python-localfiles"
    print("| language | component | first Initialize, empty cache (median) | warm Initialize (median) |")
    print("|---|---|---|---|")
    rows = subjects + [
        ("Go (the devcerts example: crypto/x509)", ROOT / "examples/go-devcerts/provider.toml", "devcerts", None),
        ("Python (componentize-py; the localfiles example)", python / "provider.toml", "localfiles", None),
    ]
    for label, manifest, provider, config in rows:
        text = manifest.read_text()
        component = manifest.parent / re.search(r'^component\s*=\s*"([^"]+)"', text, re.M).group(1)
        if config is None:  # the example's own sample project
            project = work / f"project-{provider}"
            if project.exists():
                shutil.rmtree(project)
            shutil.copytree(manifest.parent / "project", project)
        else:
            project = project_for(work, provider, provider, config)
        cold = []
        for _ in range(max(2, runs // 2)):
            with tempfile.TemporaryDirectory(dir=work) as cache:
                cold.append(initialize_micros(host, manifest, project, cache))
        warm_cache = work / f"cache-{provider}"
        initialize_micros(host, manifest, project, warm_cache)
        warm = [initialize_micros(host, manifest, project, warm_cache) for _ in range(runs)]
        size = component.stat().st_size / 1e6
        print(f"| {label} | {size:.2f} MB | {statistics.median(cold) / 1000:.0f} ms | {statistics.median(warm) / 1000:.1f} ms |")


main()
