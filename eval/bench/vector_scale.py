"""Vector search at 100k-1M chunks: exact against approximate, on real embeddings.

    python -m eval.bench.vector scale --real-home HOME --benchmark DIR [--sizes 100000 1000000]

The base set is every vector of the indexes in ``HOME`` (read, never written: the newest
generation of each repository that has a vector folder), e.g. the dev set's 36 repositories
indexed with MiniLM (~81k vectors). Past that size the set is **the real vectors
replicated**: each extra vector is ``normalise(a + 0.3 b + 0.2 n)`` for two random real
vectors a, b and a random unit vector n, which keeps the real vectors' directions and adds
the spread of more code. Queries are the benchmark's (semble-dev: 717) embedded by the
model the indexes record, so recall@10 is measured on real queries against exact float32
search over the same set.

Each size is built the way the builder builds it (``VectorStore``: add, ``settle``, save)
and searched from a fresh process that loads the index and the query model, as a query
process would: its RSS is the memory a search costs; latency is warm, one query at a time,
FAISS single-threaded. ``--exact`` also times the exact layout at every size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

import numpy as np

from signals.vector.embedder import FloatMatrix, l2_normalise
from signals.vector.faiss_index import ANN_THRESHOLD, VectorStore, faiss_ids
from signals.vector.onnx_embedder import OnnxEmbedder

RECALL_K = 10
SEARCH_K = 40  # what the vector signal asks FAISS for: limit 10 × OVERFETCH 4


def real_vectors(home: Path) -> tuple[FloatMatrix, dict[str, Any]]:
    """Every vector of the newest vector folder per repository, and one index's vector meta."""
    import faiss

    parts: list[FloatMatrix] = []
    meta: dict[str, Any] = {}
    for repo in sorted((home / "repos").iterdir()):
        folders = sorted(repo.glob("gen-*/vector/vectors.faiss"))
        if not folders:
            continue
        index = cast(Any, faiss.read_index(str(folders[-1])))  # IndexIDMap2 of the flat layout
        parts.append(index.index.reconstruct_n(0, index.ntotal))
        manifest = json.loads((folders[-1].parent.parent / "manifest.json").read_text())
        meta = meta or manifest["signals"]["vector"]["meta"]
    return l2_normalise(np.vstack(parts).astype(np.float32)), meta


def scaled(real: FloatMatrix, size: int, seed: int = 0) -> FloatMatrix:
    if size <= len(real):
        return real[:size].copy()
    rng = np.random.default_rng(seed)
    out = np.empty((size, real.shape[1]), np.float32)
    out[: len(real)] = real
    for start in range(len(real), size, len(real)):
        n = min(len(real), size - start)
        noise = l2_normalise(rng.standard_normal((n, real.shape[1])).astype(np.float32))
        mixed = real[rng.integers(0, len(real), n)] + 0.3 * real[rng.integers(0, len(real), n)]
        out[start : start + n] = l2_normalise(mixed + 0.2 * noise)
    return out


def exact_top(vectors: FloatMatrix, queries: FloatMatrix, k: int) -> np.ndarray:
    top = np.empty((len(queries), k), np.int64)
    for s in range(0, len(queries), 128):
        scores = queries[s : s + 128] @ vectors.T
        part = np.argpartition(-scores, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(scores, part, 1), axis=1)
        top[s : s + 128] = np.take_along_axis(part, order, 1)
    return top


def benchmark_queries(benchmark: Path) -> list[str]:
    texts: list[str] = []
    for path in sorted((benchmark / "annotations").glob("*.json")):
        texts += [item["query"] for item in json.loads(path.read_text())]
    return texts


# Runs in a fresh process: what a query process holds and how fast it answers.
_QUERY_PROCESS = """
import json, sys, time
from pathlib import Path
import numpy as np
from engine.types import Query
from signals.vector.faiss_index import VectorStore, chunk_ids_of
from signals.vector.onnx_embedder import OnnxEmbedder
from signals.vector.signal import VectorSignal

def rss(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) / 1024

directory, model, texts_file, queries_file, k, rounds = sys.argv[1:7]
start_mb = rss("VmRSS:")
t = time.perf_counter()
store = VectorStore.load(Path(directory))
load_s = time.perf_counter() - t
index_mb = rss("VmRSS:") - start_mb
embedder = OnnxEmbedder(Path(model), threads=1, spin=False)
signal = VectorSignal(store, embedder, Path(directory))
texts = json.loads(Path(texts_file).read_text())
queries = np.load(queries_file)
found = [chunk_ids_of(store.search(q, 10)[0]).tolist() for q in queries]
faiss_ms, signal_ms = [], []
for _ in range(int(rounds)):
    for q in queries[:200]:
        t = time.perf_counter()
        store.search(q, int(k))
        faiss_ms.append((time.perf_counter() - t) * 1e3)
    for text in texts:
        t = time.perf_counter()
        signal.search(Query(text), 10)
        signal_ms.append((time.perf_counter() - t) * 1e3)
print(json.dumps({"layout": store.layout, "load_s": load_s, "index_mb": index_mb,
  "rss_mb": rss("VmRSS:"), "hwm_mb": rss("VmHWM:"), "faiss_ms": faiss_ms,
  "signal_ms": signal_ms, "found": found}))
"""


def _query_process(
    directory: Path, model: Path, texts: list[str], queries: FloatMatrix, tmp: Path
) -> dict[str, Any]:
    (tmp / "texts.json").write_text(json.dumps(texts[:100]))
    np.save(tmp / "queries.npy", queries)
    argv = [str(directory), str(model), str(tmp / "texts.json"), str(tmp / "queries.npy")]
    out = subprocess.run(
        [sys.executable, "-c", _QUERY_PROCESS, *argv, str(SEARCH_K), "2"],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _recall(found: list[list[int]], exact: np.ndarray) -> float:
    hits = [len(set(f) & set(e.tolist())) / RECALL_K for f, e in zip(found, exact, strict=True)]
    return float(np.mean(hits))


def run(args: argparse.Namespace) -> None:
    real, meta = real_vectors(args.real_home)
    model = args.real_home / "models" / str(meta["model"]["model_id"])
    texts = benchmark_queries(args.benchmark)
    embedder = OnnxEmbedder(model, threads=1)
    queries = np.vstack([embedder.embed_query(t) for t in texts]).astype(np.float32)
    print(
        f"base: {len(real)} real vectors from {args.real_home} ({meta['model_name']},"
        f" {meta['model']['precision']}); {len(queries)} real queries from {args.benchmark.name};"
        f" approximate above {ANN_THRESHOLD} vectors"
    )
    for size in args.sizes:
        vectors = scaled(real, size)
        exact = exact_top(vectors, queries, RECALL_K)
        ids = faiss_ids(np.arange(size), np.zeros(size, np.int64))
        layouts = (
            [ANN_THRESHOLD, size + 1] if args.exact and size > ANN_THRESHOLD else [ANN_THRESHOLD]
        )
        for threshold in layouts:
            with tempfile.TemporaryDirectory() as tmp_name:
                tmp = Path(tmp_name)
                directory = tmp / "vector"
                directory.mkdir()
                start, cpu = time.perf_counter(), time.process_time()
                store = VectorStore.create(vectors.shape[1], ann_threshold=threshold)
                store.add(ids, vectors)
                store.settle()
                store.save(directory)
                build_s, build_cpu = time.perf_counter() - start, time.process_time() - cpu
                described = store.describe().get("ann", {})
                del store
                file_mb = (directory / "vectors.faiss").stat().st_size / 2**20
                got = _query_process(directory, model, texts, queries, tmp)
            faiss_ms, signal_ms = np.asarray(got["faiss_ms"]), np.asarray(got["signal_ms"])
            lists = (
                f" {described['lists']} lists, {described['probes']} probes," if described else ""
            )
            print(
                f"{size:>8} {got['layout']}:{lists} build {build_s:.1f} s ({build_cpu:.1f} CPU-s);"
                f" file {file_mb:.0f} MB; query process: load {got['load_s']:.2f} s, index"
                f" +{got['index_mb']:.0f} MB, RSS {got['rss_mb']:.0f} MB"
                f" (peak {got['hwm_mb']:.0f});"
                f" faiss k={SEARCH_K} p50 {np.percentile(faiss_ms, 50):.2f} ms p95"
                f" {np.percentile(faiss_ms, 95):.2f}; signal.search p50"
                f" {np.percentile(signal_ms, 50):.2f} ms p95 {np.percentile(signal_ms, 95):.2f};"
                f" recall@10 vs exact {_recall(got['found'], exact):.4f}",
                flush=True,
            )


def add_parser(sub: Any) -> None:
    scale = sub.add_parser("scale", help="exact vs approximate search on real embeddings")
    scale.add_argument("--real-home", type=Path, required=True, help="an ENGINE_HOME to read")
    scale.add_argument("--benchmark", type=Path, required=True, help="e.g. semble-dev")
    scale.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    scale.add_argument("--exact", action="store_true", help="time the exact layout as well")
