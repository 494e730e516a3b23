"""Benchmarks of the vector signal: embedding throughput, query latency, memory, cold start.

    python -m eval.bench.vector embed  [--chunks 500]       ONNX vs sentence-transformers
    python -m eval.bench.vector search [--sizes 10000 100000] warm query latency, memory
    python -m eval.bench.vector cold   [--chunks 500]       fresh-process query time
    python -m eval.bench.vector parts  [--chunks 300]       one vector per chunk vs windows
    python -m eval.bench.vector scale  --real-home H --benchmark B  100k-1M, exact vs ivf
                                                            (eval/bench/vector_scale.py)

The corpus is real code: 40-line windows (at least 25 non-blank lines) cut from this
interpreter's standard library, in file order. Search latency uses random-but-clustered
vectors (2,000 centres, cos(x, centre) ~ 0.8) so FAISS sizes need no embedding; ``scale``
uses real embeddings. Run it under ``nice -n 10`` on a shared machine; every mode but
``scale`` (~15 minutes with 1M vectors) takes well under two minutes.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from engine.signal import BuildJob, IndexOptions
from engine.types import Chunk, Query
from eval.bench import vector_scale
from signals.vector.builder import DEFAULT_EMBED, VectorBuilder
from signals.vector.documents import document_parts
from signals.vector.embedder import Embedder, FloatMatrix, l2_normalise
from signals.vector.export import ensure_export
from signals.vector.faiss_index import VectorStore, faiss_ids
from signals.vector.loader import DOCUMENT_BATCH
from signals.vector.model import identify, resolve_model
from signals.vector.onnx_embedder import FP32, INT8, MIXED, OnnxEmbedder

QUERIES = [
    "parse HTTP request body",
    "read a config file and return a dict",
    "retry a network call with exponential backoff",
    "convert a date string to a timestamp",
    "walk a directory tree recursively",
    "compute the checksum of a file",
    "escape html special characters",
    "thread pool that runs tasks concurrently",
]


def stdlib_chunks(limit: int, *, window: int = 40, min_lines: int = 25) -> list[Chunk]:
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[Chunk] = []
    for path in sorted(root.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(root).as_posix()
        for start in range(0, len(lines), window):
            part = lines[start : start + window]
            if sum(1 for line in part if line.strip()) < min_lines:
                continue
            chunks.append(
                Chunk(
                    len(chunks) + 1,
                    rel,
                    "python",
                    "window",
                    "",
                    "",
                    "",
                    start + 1,
                    start + len(part),
                    "\n".join(part),
                )
            )
            if len(chunks) == limit:
                return chunks
    return chunks


def bundled_export(home: Path, precision: str = FP32) -> Path:
    return ensure_export(identify(resolve_model(None), home), home, precision)


def _throughput(
    embed: Callable[[list[str]], FloatMatrix], texts: list[str]
) -> tuple[float, FloatMatrix]:
    embed(texts[:16])  # warm-up: first runs allocate
    start = time.perf_counter()
    vectors = embed(texts)
    return len(texts) / (time.perf_counter() - start), vectors


def cmd_embed(args: argparse.Namespace) -> None:
    chunks = stdlib_chunks(args.chunks)
    texts = [document_parts(c)[0] for c in chunks]
    export = bundled_export(args.home)
    onnx = OnnxEmbedder(export, threads=2, batch_size=DOCUMENT_BATCH)
    tokens = onnx.token_counts(texts)
    print(
        f"corpus: {len(texts)} stdlib windows, mean {statistics.mean(map(len, texts)):.0f} chars,"
        f" word pieces median {statistics.median(tokens):.0f}, cut at 256 for"
        f" {sum(t >= 256 for t in tokens)}"
    )
    rate, sorted_vectors = _throughput(onnx.embed_documents, texts)
    print(f"onnx  fp32 sorted bs{DOCUMENT_BATCH:<2} threads2: {rate:6.1f} chunks/s")

    def unsorted(batch: list[str]) -> FloatMatrix:
        # Batches in corpus order: each pads to its longest text.
        step = DOCUMENT_BATCH
        return np.vstack(
            [onnx.embed_documents(batch[i : i + step]) for i in range(0, len(batch), step)]
        )

    rate, _ = _throughput(unsorted, texts)
    print(f"onnx  unsorted bs{DOCUMENT_BATCH:<2} threads2: {rate:6.1f} chunks/s")
    for batch_size in args.batch_sizes:
        other = OnnxEmbedder(export, threads=2, batch_size=batch_size)
        rate, _ = _throughput(other.embed_documents, texts)
        print(f"onnx  sorted   bs{batch_size:<2} threads2: {rate:6.1f} chunks/s")
    # The faster paths (signals/vector/quantize.py, document_tokens): speed, and how far
    # their vectors are from the reference; eval/RESULTS.md has what that does to retrieval.
    for precision in (FP32, MIXED, INT8):
        for pieces in (256, 128):
            variant = OnnxEmbedder(
                bundled_export(args.home, precision),
                threads=2,
                batch_size=DOCUMENT_BATCH,
                document_tokens=pieces,
            )
            cpu = time.process_time()
            rate, vectors = _throughput(variant.embed_documents, texts)
            cos = np.sum(vectors * sorted_vectors, axis=1)
            default = (precision, pieces) == (
                DEFAULT_EMBED.precision,
                DEFAULT_EMBED.document_tokens,
            )
            print(
                f"onnx  {precision} {pieces:>3} pieces bs{DOCUMENT_BATCH}: {rate:6.1f} chunks/s"
                f" (cpu {time.process_time() - cpu:.1f} s incl. warm-up);"
                f" cos to fp32/256 mean {cos.mean():.3f} min {cos.min():.3f}"
                + ("  <- default" if default else "")
            )

    from signals.vector.st_embedder import SentenceTransformerEmbedder

    st = SentenceTransformerEmbedder(str(resolve_model(None).path), "bench", batch_size=16)
    rate, st_vectors = _throughput(st.embed_documents, texts)
    print(f"sentence-transformers bs16:   {rate:6.1f} chunks/s (it sorts by length itself)")
    diff = 1.0 - np.sum(sorted_vectors * st_vectors, axis=1)
    print(
        f"onnx vs sentence-transformers over {len(texts)} chunks: max 1-cos {diff.max():.2e},"
        f" max |dv| {np.abs(sorted_vectors - st_vectors).max():.2e}"
    )


def clustered(n: int, dim: int, seed: int = 0, centres: int = 2000) -> FloatMatrix:
    rng = np.random.default_rng(seed)
    c = l2_normalise(rng.standard_normal((centres, dim)).astype(np.float32))
    noise = l2_normalise(rng.standard_normal((n, dim)).astype(np.float32))
    # 0.8 * centre + 0.6 * noise: cos(x, centre) ~ 0.8 for unit vectors.
    return l2_normalise(0.8 * c[rng.integers(0, centres, n)] + 0.6 * noise)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _timed(calls: Sequence[Callable[[], object]], rounds: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (this thread) milliseconds of each call, ``rounds`` times over.

    CPU time is reported too because wall time on a shared machine measures the neighbours.
    """
    walls, cpus = [], []
    for _ in range(rounds):
        for call in calls:
            wall, cpu = time.perf_counter(), time.thread_time()
            call()
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.thread_time() - cpu) * 1000)
    return walls, cpus


def _p(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def cmd_search(args: argparse.Namespace) -> None:
    from signals.vector.signal import VectorSignal

    before = _rss_mb()
    export = bundled_export(args.home, DEFAULT_EMBED.precision)
    embedder = OnnxEmbedder(export, threads=1, spin=False)
    print(f"ONNX session + tokenizer ({DEFAULT_EMBED.precision}): +{_rss_mb() - before:.0f} MB RSS")
    embed_ms, embed_cpu = _timed([partial(embedder.embed_query, q) for q in QUERIES], 5)
    print(
        f"query embedding (1 thread): wall p50 {_p(embed_ms, 50):.2f} ms p90"
        f" {_p(embed_ms, 90):.2f}; cpu p50 {_p(embed_cpu, 50):.2f} ms"
    )
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = VectorStore.create(384)
            store.add(faiss_ids(np.arange(size), np.zeros(size, np.int64)), clustered(size, 384))
            store.save(Path(tmp))
            del store
            before = _rss_mb()
            loaded = VectorStore.load(Path(tmp))
            grown = _rss_mb() - before
            signal = VectorSignal(loaded, embedder, Path(tmp))
            queries = clustered(200, 384, seed=1)
            faiss_ms, faiss_cpu = _timed([partial(loaded.search, q, 40) for q in queries], 1)
            full_ms, full_cpu = _timed([partial(signal.search, Query(t), 10) for t in QUERIES], 5)
            print(
                f"{size:>7} vectors flat: load +{grown:.0f} MB RSS; faiss k=40 wall p50"
                f" {_p(faiss_ms, 50):.2f} ms (cpu {_p(faiss_cpu, 50):.2f}); signal.search"
                f" (embed+faiss+dedup) wall p50 {_p(full_ms, 50):.2f} ms p90"
                f" {_p(full_ms, 90):.2f} (cpu p50 {_p(full_cpu, 50):.2f})"
            )
            if args.ann and size >= 50_000:
                ann = VectorStore.create(384, ann_threshold=1)
                t = time.perf_counter()
                ann.add(faiss_ids(np.arange(size), np.zeros(size, np.int64)), clustered(size, 384))
                ann.settle()
                build_s = time.perf_counter() - t
                ann_ms, recall = [], []
                for q in queries:
                    t = time.perf_counter()
                    ids, _ = ann.search(q, 10)
                    ann_ms.append((time.perf_counter() - t) * 1000)
                    exact, _ = loaded.search(q, 10)
                    recall.append(len(set(ids.tolist()) & set(exact.tolist())) / 10)
                print(
                    f"{size:>7} vectors {ann.layout}: build {build_s:.1f} s; k=10 p50"
                    f" {_p(ann_ms, 50):.3f} ms; recall@10 vs flat {statistics.mean(recall):.3f}"
                )


class _MemorySource:
    def __init__(self, chunks: list[Chunk]) -> None:
        self._chunks = {c.id: c for c in chunks}

    def chunks(self, ids: Sequence[int]) -> dict[int, Chunk]:
        return {i: self._chunks[i] for i in ids}

    def iter_chunks(self) -> list[Chunk]:
        return list(self._chunks.values())

    def chunk_count(self) -> int:
        return len(self._chunks)


def build_real_index(chunks: list[Chunk], home: Path, directory: Path) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    progress_marks: list[float] = []

    def progress(stage: str, done: int, total: int) -> None:
        progress_marks.append(time.perf_counter())

    start = time.perf_counter()
    report = VectorBuilder(IndexOptions(home=home)).build(
        BuildJob(
            Path(), directory, None, {}, chunks, (), (), (), (), _MemorySource(chunks), progress
        )
    )
    print(f"build: {time.perf_counter() - start:.1f} s; {report.message}")
    return report.meta


def cmd_cold(args: argparse.Namespace) -> None:
    chunks = stdlib_chunks(args.chunks)
    directory = args.home / "bench-index" / "vector"
    meta = build_real_index(chunks, args.home, directory)
    meta_file = args.home / "bench-index" / "meta.json"
    meta_file.write_text(json.dumps(meta))
    code = f"""
import json, time
t0 = time.perf_counter()
from pathlib import Path
from engine.signal import OpenOptions
from engine.types import Query
from signals.vector.plugin import PLUGIN
t1 = time.perf_counter()
meta = json.loads(Path({str(meta_file)!r}).read_text())
signal = PLUGIN.open(Path({str(directory)!r}), meta, OpenOptions(home=Path({str(args.home)!r})))
t2 = time.perf_counter()
hits = signal.search(Query("parse HTTP request body"), 10)
t3 = time.perf_counter()
import sys
print(json.dumps({{"import": t1 - t0, "open": t2 - t1, "search": t3 - t2, "hits": len(hits),
  "torch": "torch" in sys.modules}}))
"""
    walls, cpus, parts = [], [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        walls.append(time.perf_counter() - t)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        parts.append(json.loads(out.stdout))
    print(
        f"cold process ({len(chunks)} chunks indexed), {args.runs} runs: wall p50"
        f" {statistics.median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f}),"
        f" cpu p50 {statistics.median(cpus):.3f} s;"
        f" import {statistics.median(p['import'] for p in parts):.3f} s, open"
        f" {statistics.median(p['open'] for p in parts):.3f} s, first search"
        f" {statistics.median(p['search'] for p in parts):.3f} s; torch imported:"
        f" {any(p['torch'] for p in parts)}"
    )


def cmd_parts(args: argparse.Namespace) -> None:
    """A rough proxy for the eval harness: find a function from its docstring's first line.

    Documents leave the docstring out (else the query would be in the text); MRR over the
    functions, with one vector per chunk vs windows scored by the best part.
    """
    import ast

    root = Path(sysconfig.get_paths()["stdlib"])
    items: list[tuple[Chunk, str]] = []
    for path in sorted(root.glob("*.py")):
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError):
            continue
        lines = source.split("\n")
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            doc = ast.get_docstring(node)
            if not doc or node.end_lineno is None or node.end_lineno - node.lineno < 30:
                continue
            body = node.body[1:]
            text = "\n".join(lines[body[0].lineno - 1 : node.end_lineno]) if body else ""
            chunk = Chunk(
                len(items) + 1,
                path.name,
                "python",
                "function",
                node.name,
                node.name,
                "",
                node.lineno,
                node.end_lineno,
                text,
            )
            items.append((chunk, doc.strip().split("\n")[0]))
            if len(items) == args.chunks:
                break
        if len(items) == args.chunks:
            break
    embedder: Embedder = OnnxEmbedder(bundled_export(args.home), threads=2)
    queries = np.vstack([embedder.embed_query(q) for _, q in items])
    for max_parts in (1, 4):
        ids: list[int] = []
        texts: list[str] = []
        for chunk, _ in items:
            for text in document_parts(chunk, max_parts):
                ids.append(chunk.id)
                texts.append(text)
        t = time.perf_counter()
        vectors = embedder.embed_documents(texts)
        seconds = time.perf_counter() - t
        scores = queries @ vectors.T
        best = np.full((len(items), len(items)), -2.0, dtype=np.float32)
        for column, cid in enumerate(ids):
            best[:, cid - 1] = np.maximum(best[:, cid - 1], scores[:, column])
        ranks = [(best[i] > best[i, i]).sum() + 1 for i in range(len(items))]
        mrr = statistics.mean(1.0 / float(r) for r in ranks)
        hit10 = statistics.mean(float(r <= 10) for r in ranks)
        print(
            f"max_parts={max_parts}: {len(texts)} vectors for {len(items)} functions,"
            f" embed {seconds:.1f} s; MRR {mrr:.3f}, hit@10 {hit10:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--home", type=Path, default=Path(tempfile.gettempdir()) / "engine-vector-bench"
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    embed = sub.add_parser("embed")
    embed.add_argument("--chunks", type=int, default=500)
    embed.add_argument(
        "--batch-sizes", type=int, nargs="*", default=[], help="besides the indexing one"
    )
    search = sub.add_parser("search")
    search.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    search.add_argument("--ann", action="store_true", help="the approximate layout too")
    cold = sub.add_parser("cold")
    cold.add_argument("--chunks", type=int, default=500)
    cold.add_argument("--runs", type=int, default=5)
    parts = sub.add_parser("parts")
    parts.add_argument("--chunks", type=int, default=300)
    vector_scale.add_parser(sub)
    args = parser.parse_args()
    args.home.mkdir(parents=True, exist_ok=True)
    commands = {"embed": cmd_embed, "search": cmd_search, "cold": cmd_cold, "parts": cmd_parts}
    commands["scale"] = vector_scale.run
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
