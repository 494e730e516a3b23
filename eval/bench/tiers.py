"""Benchmark of the vector signal's tiers: how soon every signal answers, how soon MiniLM's do.

    python -m eval.bench.tiers [--max-files 400] [--models HOME] [--vectors full|fast]

Copies ~10k chunks of this interpreter's standard library (eval/bench/serve.py's corpus),
then runs ``engine index`` in a child process with a fresh home and embedding cache while
this process watches the published generations: the time until lexical, symbol and vector
all answer (the static tier's generation), then until the vector signal's full tier is
published. The models (the ONNX export, the distilled static model) are one-time work per
home, made once outside the timing: ``--models`` names a home to link them from (else they
are made first, untimed). One query is asked as soon as every signal answers, to show the
tier in its ``signals`` block.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from engine.index.generations import current_generation
from engine.index.manifest import read_manifest
from eval.bench.serve import copy_corpus

SLUG = "corpus"
SIGNALS = ("lexical", "symbol", "vector")
ENGINE = [sys.executable, "-c", "from cli.main import main; main()"]


def _state(repo_dir: Path) -> dict[str, Any]:
    """The published generation's signal states ({} before the first is published)."""
    try:
        generation = current_generation(repo_dir)
        if generation is None:
            return {}
        manifest = read_manifest(generation)
    except Exception:  # a generation being replaced under us: try again next poll
        return {}
    return {
        name: (state.ready, str(state.meta.get("tier", "")), float(state.meta.get("coverage", 0)))
        for name, state in manifest.signals.items()
    }


def link_models(source: Path, home: Path) -> None:
    """Hard-link the model folders (exports, static models) of ``source`` into ``home``."""
    target = home / "models"
    for entry in (source / "models").iterdir():
        if entry.is_dir() and not entry.name.startswith("."):
            shutil.copytree(entry, target / entry.name, copy_function=os.link)
        elif entry.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(entry, target / entry.name)


def prepare_models(home: Path) -> None:
    """Export MiniLM (at the default precision) and distil the static model into ``home``."""
    from signals.vector.builder import DEFAULT_EMBED
    from signals.vector.export import ensure_export
    from signals.vector.model import identify, resolve_model
    from signals.vector.static_model import ensure_static_model

    identity = identify(resolve_model(None), home)
    ensure_export(identity, home, DEFAULT_EMBED.precision)
    ensure_static_model(identity, home)


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-tiers-"))
    corpus = copy_corpus(Path(sysconfig.get_paths()["stdlib"]), work / "corpus", args.max_files)
    home = work / "home"
    home.mkdir()
    if args.models:
        link_models(Path(args.models), home)
    else:
        prepare_models(home)
    env = {**os.environ, "ENGINE_HOME": str(home)}
    command = [*ENGINE, "index", str(corpus), "--name", SLUG, "--json"]
    if args.vectors:
        command += ["--vectors", args.vectors]
    repo_dir = home / "repos" / SLUG
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    seen: dict[str, float] = {}
    query: dict[str, Any] = {}
    while child.poll() is None:
        state = _state(repo_dir)
        now = time.perf_counter() - started
        if state and "all" not in seen and all(state.get(n, (False,))[0] for n in SIGNALS):
            seen["all"] = now
            seen["first_tier"] = 0.0 if state["vector"][1] == "full" else 1.0
            done = subprocess.run(
                [*ENGINE, "query", SLUG, "read a config file", "--json", "--explain"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode == 0:
                query = {s["signal"]: s.get("tier", "") for s in json.loads(done.stdout)["signals"]}
        if state.get("vector", (False, ""))[1] == "full" and "full" not in seen:
            seen["full"] = now
        time.sleep(0.2)
    total = time.perf_counter() - started
    out = child.stdout.read() if child.stdout else b""
    report = json.loads(out) if child.returncode == 0 else {}
    state = _state(repo_dir)
    if state.get("vector", (False, ""))[1] == "full" and "full" not in seen:
        seen["full"] = total
    shutil.rmtree(work, ignore_errors=True)
    return {
        "chunks": report.get("chunks"),
        "allSignalsAnswer_s": round(seen.get("all", total), 1),
        "fullVectors_s": round(seen["full"], 1) if "full" in seen else None,
        "total_s": round(total, 1),
        "tiersAtFirstAnswer": query,
        "stageSeconds": report.get("stageSeconds"),
        "load": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-files", type=int, default=400, help="400 stdlib files: ~10k chunks")
    parser.add_argument("--models", help="a home whose model folders to link (untimed set-up)")
    parser.add_argument("--vectors", choices=["full", "fast"])
    print(json.dumps(run(parser.parse_args(argv)), indent=1))


if __name__ == "__main__":
    main()
