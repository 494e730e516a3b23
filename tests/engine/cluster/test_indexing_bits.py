"""The Ray Data path gives MiniLM's vectors bit for bit, as the local builder does.

About 100 real chunks (windows of the standard library's json, textwrap, shlex and argparse)
are embedded twice with the real ONNX export at the default (mixed) precision: locally by
``VectorBuilder`` (two encoder threads, its own batches), and on the simulated cluster by two
actors (one thread each, the model shipped to their node's disk) in the batches
``embedding_batches`` forms, after which ``VectorBuilder`` finds every text cached. Other
batches would give other vectors (up to ~0.015 apart): the check is ``np.array_equal``.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from engine.cluster.indexing import index_on_cluster
from engine.cluster.indexing_embed import embed_on_cluster
from engine.cluster.indexing_repos import RepoSpec
from engine.signal import IndexOptions
from engine.types import Chunk
from signals import registry
from signals.vector.builder import VectorBuilder
from signals.vector.cache import EmbeddingCache, cache_path
from signals.vector.cluster_embedding import ClusterVectorEmbedding
from tests.engine.cluster.conftest import SimulatedCluster
from tests.engine.cluster.indexing_helpers import (
    build_local,
    manifest_json,
    published,
    rankings,
    rows,
    vector_files,
)
from tests.fakes import FakeChunkSource, Generations, make_chunk

pytestmark = [pytest.mark.slow, pytest.mark.real_model]

MODELS = Path(os.environ.get("ENGINE_TEST_MODELS", "/work/bench/home/models"))
# A home that also holds the static model the local build's first tier needs (distilling it
# again costs 20 s to 2 minutes); the cluster build never uses it.
STATIC_MODELS = Path(os.environ.get("ENGINE_TEST_STATIC_MODELS", "/work/bench/home-own/models"))
WINDOW_LINES = 30


def real_chunks(limit: int = 100) -> list[Chunk]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[Chunk] = []
    for module in ("json/decoder.py", "json/encoder.py", "textwrap.py", "shlex.py", "argparse.py"):
        lines = (stdlib / module).read_text(encoding="utf-8").split("\n")
        for start in range(0, len(lines), WINDOW_LINES):
            text = "\n".join(lines[start : start + WINDOW_LINES]).strip()
            if text and len(chunks) < limit:
                chunks.append(
                    make_chunk(
                        len(chunks) + 1, module, text, name="", kind="window", start_line=start + 1
                    )
                )
    return chunks


def home_with_models(path: Path, *, static: bool = False) -> Path:
    """A home holding the exported models, hard-linked (never exported again here), and with
    ``static`` the static model distilled from them."""
    if not (MODELS / "53aa51172d142c89-084fac45-mixed-f3").is_dir():
        pytest.skip(f"no exported MiniLM in {MODELS}")
    entries = list(MODELS.iterdir())
    if static:
        found = sorted(STATIC_MODELS.glob("static-*")) if STATIC_MODELS.is_dir() else []
        if not found:
            pytest.skip(f"no static model in {STATIC_MODELS}")
        # MODELS may hold a static model of its own (a home whose index had a first tier).
        entries += [e for e in found if not (MODELS / e.name).exists()]
    (path / "models").mkdir(parents=True, exist_ok=True)
    for entry in entries:
        if entry.is_dir():
            shutil.copytree(entry, path / "models" / entry.name, copy_function=os.link)
        else:
            shutil.copyfile(entry, path / "models" / entry.name)
    return path


def test_ray_data_vectors_are_the_local_builders_bit_for_bit(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    chunks = real_chunks()
    assert len(chunks) >= 90
    source = FakeChunkSource(chunks)

    local_home = home_with_models(tmp_path / "local")
    local_dir, local_report = Generations(tmp_path / "local-gens").build(
        VectorBuilder(IndexOptions(home=local_home)), source, chunks
    )
    assert f"{len(chunks)} texts embedded, 0 reused" in local_report.message

    cluster_home = home_with_models(tmp_path / "coordinator")
    with ClusterVectorEmbedding(IndexOptions(home=cluster_home)) as side:
        texts = side.texts(chunks)
        keys = [side.key(t) for t in texts]
        text_of = dict(zip(keys, texts, strict=True))
        batches = side.batches(keys, text_of)
        stats = embed_on_cluster(
            [[text_of[k] for k in b] for b in batches],
            side,
            actors=2,
            done=lambda i, vectors: side.put(batches[i], vectors),
        )
        cache_id, dim = side.cache_id, side.dim
    assert stats.texts == len(chunks) and len(stats.per_actor) >= 1
    cluster_dir, cluster_report = Generations(tmp_path / "cluster-gens").build(
        VectorBuilder(IndexOptions(home=cluster_home)), source, chunks
    )
    assert f"0 texts embedded, {len(chunks)} reused" in cluster_report.message

    with (
        EmbeddingCache(cache_path(local_home, cache_id), cache_id, dim) as local_cache,
        EmbeddingCache(cache_path(cluster_home, cache_id), cache_id, dim) as cluster_cache,
    ):
        local, cluster = local_cache.get_many(keys), cluster_cache.get_many(keys)
    assert len(local) == len(cluster) == len(chunks)
    assert all(np.array_equal(local[k], cluster[k]) for k in keys)
    files = sorted(p.name for p in local_dir.iterdir() if p.is_file())
    assert files == sorted(p.name for p in cluster_dir.iterdir() if p.is_file())
    for name in files:
        assert (cluster_dir / name).read_bytes() == (local_dir / name).read_bytes(), name


def stdlib_repos(root: Path) -> list[RepoSpec]:
    """Two small repositories of real code, one file shared at one path."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    layout = {
        "jsonlib": ["json/__init__.py", "json/decoder.py", "json/scanner.py", "shlex.py"],
        "textlib": ["textwrap.py", "shlex.py"],
    }
    specs = []
    for name, files in layout.items():
        for rel in files:
            target = root / name / Path(rel).name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stdlib / rel, target)
        specs.append(RepoSpec(name, (root / name).resolve()))
    return specs


def test_a_cluster_build_with_the_real_model_is_the_local_build(
    ray_cluster3: SimulatedCluster, tmp_path: Path
) -> None:
    repos = stdlib_repos(tmp_path / "repos")
    build_local(home_with_models(tmp_path / "local", static=True), repos)
    coordinator = home_with_models(tmp_path / "coordinator")
    options = IndexOptions(home=coordinator)
    with ClusterVectorEmbedding(options) as side:
        report = index_on_cluster(repos, tmp_path / "store", registry.plugins(), options, side)
    assert not report.failed, report.failed
    assert report.embedded < sum(r.texts for r in report.repos)  # shlex.py is embedded once
    slugs = [spec.slug for spec in repos]
    for slug in slugs:
        local, cluster = published(tmp_path / "local", slug), published(tmp_path / "store", slug)
        assert rows(cluster) == rows(local), slug
        assert vector_files(cluster) == vector_files(local), slug
        assert manifest_json(cluster) == manifest_json(local), slug
    for query in ("split a shell command line", "decode a JSON document", "wrap text"):
        assert rankings(tmp_path / "store", slugs, query) == rankings(
            tmp_path / "local", slugs, query
        )
