"""The FAISS index of one generation: vectors keyed by (chunk id, part), searched by cosine.

FAISS quirks stay in this module and ivf.py. Vectors are L2-normalised, so inner product is
cosine. A FAISS id packs the chunk id and the part number (a long chunk may have several
vectors): ``faiss_id = chunk_id << PART_BITS | part``; callers only ever see chunk ids.

Layouts, chosen by size (``settle``):
- ``flat``: ``IndexIDMap2(IndexScalarQuantizer(fp16, inner product))``, an exhaustive scan
  over half-precision copies of the vectors; ``remove_ids`` works. Against ``IndexFlatIP``
  at 100k clustered vectors (one query, one thread, loaded machine): 9.1 vs 15.4 ms CPU,
  recall@10 0.999, 73 vs 146 MB; scores differ by ~1e-3. A scan is memory-bound, so half
  the bytes is most of the speed-up. Its cost grows with the index: on two loaded cores
  (2026-12-02) 12-16 ms wall (8 ms CPU) per query at 100k, 24-26 at 250k, 51 at 500k,
  84-114 at 1M.
- ``ivf``: above ``ANN_THRESHOLD`` (200k vectors, where a flat scan takes ~20-25 ms under
  load, most of a query's 40 ms goal), an inverted file over int8 codes (ivf.py): recall@10
  0.980 at 250k and 0.970 at 1M against exact search on real embeddings, 3.3 and 6.6 ms per
  query, half the flat layout's memory (0.4 against 0.8 GB per 1M). Adds and removals work
  in place; the lists are trained again when the index passes a size where ``lists_for``
  doubles (524k, then 2.1M vectors: steps of four).
- ``hnsw``: ``IndexIDMap2(IndexHNSWFlat)``, the layout this engine wrote above 500k vectors
  before ``ivf``. Still read and searched (removed ids are tombstones in ``tombstones.npy``,
  which searches exclude with an ``IDSelector``: HNSW cannot remove), and converted by the
  next update's ``settle``. It was dropped because building it took 7-100 s per 100k here,
  its recall on 1M clustered vectors was 0.84 at efSearch 128 (shared/STACK.md), it keeps
  float32 vectors (1.5 GB per 1M) and it cannot remove.

Searches run FAISS single-threaded (per calling thread): one query gains nothing from a
second OpenMP thread, and on shared cores the idle thread's spin-wait made a 100k flat
search 3x slower (120 vs 36 ms under load).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from signals.vector import ivf
from signals.vector.embedder import FloatMatrix, FloatVector
from signals.vector.files import (
    INDEX_FILE,
    LAYOUT_FILE,
    TOMBSTONES_FILE,
    VectorFilesDamaged,
    check_index_files,
    written_sizes,
)

PART_BITS = 4

ANN_THRESHOLD = 200_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 256

Layout = Literal["flat", "ivf", "hnsw"]
IdArray = npt.NDArray[np.int64]


MAX_CHUNK_ID = (1 << (63 - PART_BITS)) - 1


def faiss_ids(chunk_ids: Sequence[int] | IdArray, parts: Sequence[int] | IdArray) -> IdArray:
    chunks = np.asarray(chunk_ids, dtype=np.int64)
    if len(chunks) and (chunks.min() < 0 or chunks.max() > MAX_CHUNK_ID):
        # The chunk store hands out small AUTOINCREMENT ids; anything else would collide.
        raise ValueError(f"chunk ids must lie in [0, {MAX_CHUNK_ID}] to pack into FAISS ids")
    return (chunks << PART_BITS) | np.asarray(parts, np.int64)


def chunk_ids_of(ids: IdArray) -> IdArray:
    return ids >> PART_BITS


class VectorStore:
    """A mutable FAISS index plus its tombstones; ``save`` writes one generation's files."""

    def __init__(self, index: Any, layout: Layout, tombstones: IdArray, ann_threshold: int) -> None:
        self._index = index
        self._layout: Layout = layout
        self._dead = tombstones
        self._threshold = ann_threshold
        self._params: Any = None
        self._keepalive: tuple[Any, ...] = ()
        self._refresh_search_params()

    @classmethod
    def create(cls, dim: int, *, ann_threshold: int = ANN_THRESHOLD) -> VectorStore:
        return cls(_new_index(dim, "flat"), "flat", np.zeros(0, np.int64), ann_threshold)

    @classmethod
    def load(
        cls, directory: Path, *, mmap: bool = False, ann_threshold: int = ANN_THRESHOLD
    ) -> VectorStore:
        import faiss

        layout_data = check_index_files(directory)  # VectorFilesDamaged, a ValueError
        recorded = layout_data.get("layout")
        layout: Layout = recorded if recorded in ("ivf", "hnsw") else "flat"
        flags = faiss.IO_FLAG_MMAP if mmap else 0
        index = faiss.read_index(str(directory / INDEX_FILE), flags)
        if (layout == "ivf") != ivf.is_ivf(index):
            raise VectorFilesDamaged(f"{INDEX_FILE} does not hold the {layout} layout")
        if layout == "ivf":
            ivf.set_probes(index)
        dead_path = directory / TOMBSTONES_FILE
        dead = np.load(dead_path) if dead_path.is_file() else np.zeros(0, np.int64)
        return cls(index, layout, dead.astype(np.int64), ann_threshold)

    @property
    def dim(self) -> int:
        return int(self._index.d)

    @property
    def layout(self) -> Layout:
        return self._layout

    @property
    def vector_count(self) -> int:
        """Live vectors (tombstoned ones excluded)."""
        return int(self._index.ntotal) - len(self._dead)

    @property
    def tombstone_count(self) -> int:
        return len(self._dead)

    def describe(self) -> dict[str, Any]:
        """What the vector meta records of the approximate layout; nothing for ``flat``."""
        if self._layout != "ivf":
            return {}
        return {
            "ann": {
                "codes": "sq8",
                "lists": int(self._index.nlist),
                "probes": int(self._index.nprobe),
            }
        }

    def live_ids(self) -> IdArray:
        import faiss

        if self._layout == "ivf":
            return ivf.ids_of(self._index)
        ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        if len(self._dead):
            ids = ids[~np.isin(ids, self._dead)]
        return ids

    def remove_chunks(self, chunk_ids: Sequence[int] | IdArray) -> int:
        """Remove every part of these chunks; returns how many vectors went."""
        if len(chunk_ids) == 0 or self._index.ntotal == 0:
            return 0
        ids = self.live_ids()
        doomed = ids[np.isin(chunk_ids_of(ids), np.asarray(chunk_ids, dtype=np.int64))]
        if len(doomed) == 0:
            return 0
        if self._layout != "hnsw":
            self._index.remove_ids(doomed)
        else:
            self._dead = np.union1d(self._dead, doomed)
            self._refresh_search_params()
        return len(doomed)

    def add(self, ids: IdArray, vectors: FloatMatrix) -> None:
        if len(ids) == 0:
            return
        if self._layout == "hnsw" and len(self._dead) and np.isin(ids, self._dead).any():
            # A tombstoned id coming back would stay hidden by its own tombstone.
            self._rebuild("ivf")
        self._index.add_with_ids(np.ascontiguousarray(vectors, np.float32), ids)

    def settle(self) -> None:
        """Pick the layout for the current size: exact up to the threshold, ``ivf`` above it,
        its lists trained again once the index has outgrown them."""
        live = self.vector_count
        if self._layout == "flat" and live > self._threshold:
            self._rebuild("ivf")
        elif self._layout != "flat" and live < self._threshold // 2:
            # Hysteresis: an index near the threshold does not flip layout on every update.
            self._rebuild("flat")
        elif self._layout == "hnsw" or self._outgrown(live):
            self._rebuild("ivf")

    def _outgrown(self, live: int) -> bool:
        """An ``ivf`` index grown past a size where ``lists_for`` doubles (524k, 2.1M: steps
        of four) since its lists were trained: they are long, and their centres fit the
        vectors of then."""
        return self._layout == "ivf" and ivf.lists_for(live) >= 2 * int(self._index.nlist)

    def search(self, query: FloatVector, k: int) -> tuple[IdArray, npt.NDArray[np.float32]]:
        """Up to ``k`` (faiss id, cosine) pairs, best first."""
        import faiss

        if k <= 0 or self.vector_count == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        # Affects only the calling thread's OpenMP regions (libgomp keeps it per thread).
        faiss.omp_set_num_threads(1)
        k = min(k, self.vector_count)
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        if self._params is None:
            scores, ids = self._index.search(q, k)
        else:
            scores, ids = self._index.search(q, k, params=self._params)
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)

    def save(self, directory: Path) -> None:
        """Write the index; a refused write (full disk, read-only folder) raises ``OSError``."""
        import faiss

        target = directory / INDEX_FILE
        try:
            faiss.write_index(self._index, str(target))
        except RuntimeError as exc:  # FAISS reports a failed fwrite as RuntimeError
            raise _write_error(exc, target) from exc
        if len(self._dead):
            np.save(directory / TOMBSTONES_FILE, self._dead)
        layout = {"layout": self._layout, "dim": self.dim, "bytes": written_sizes(directory)}
        (directory / LAYOUT_FILE).write_text(json.dumps(layout), encoding="utf-8")

    def _rebuild(self, layout: Layout) -> None:
        """The same live vectors in a new index of ``layout``. Out of ``ivf`` they are its
        int8 codes decoded, not the embedder's vectors (1 - cosine ≤ 3e-4 on real MiniLM
        vectors, ivf.py's ``RANGE_MARGIN``)."""
        import faiss

        vectors: FloatMatrix
        if self._layout == "ivf":
            ids, vectors = ivf.contents(self._index)
        else:
            total = int(self._index.ntotal)
            ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
            vectors = self._index.index.reconstruct_n(0, total) if total else _empty(self.dim)
        if len(self._dead):
            live = ~np.isin(ids, self._dead)
            ids, vectors = ids[live], vectors[live]
        dim = self.dim
        # The old index goes before the new one is built: at 1M vectors a flat one is 768 MB
        # of a conversion's peak (3.0 GB with it).
        self._index = None
        if layout == "ivf":
            index = ivf.build(dim, ids, vectors)
        else:
            index = _new_index(dim, layout)
            if len(ids):
                index.add_with_ids(np.ascontiguousarray(vectors), ids)
        self._index = index
        self._layout = layout
        self._dead = np.zeros(0, np.int64)
        self._refresh_search_params()

    def _refresh_search_params(self) -> None:
        import faiss

        if self._layout != "hnsw":
            self._params = None  # ivf: the index's own nprobe (ivf.set_probes)
            return
        # Exists at run time; faiss's bundled stub file does not list it.
        params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
        params.efSearch = HNSW_EF_SEARCH
        if len(self._dead):
            # Selectors hold raw pointers: keep the batch alive as long as the params.
            batch = faiss.IDSelectorBatch(self._dead)
            selector = faiss.IDSelectorNot(batch)
            params.sel = selector
            self._keepalive = (batch, selector)
        self._params = params


def _write_error(exc: RuntimeError, target: Path) -> OSError:
    """FAISS's write failure as the ``OSError`` it wraps: its message ends in ``strerror``
    ("write error in ...: 0 != 4096 (No space left on device)"), the only trace of errno."""
    message = str(exc)
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES):
        if os.strerror(code) in message:
            return OSError(code, os.strerror(code), str(target))
    return OSError(errno.EIO, f"FAISS could not write the index: {message.strip()}", str(target))


def _empty(dim: int) -> FloatMatrix:
    return np.zeros((0, dim), np.float32)


def _new_index(dim: int, layout: Layout) -> Any:
    import faiss

    if layout == "flat":
        codes = faiss.IndexScalarQuantizer(
            dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        )
        return faiss.IndexIDMap2(codes)
    inner = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    return faiss.IndexIDMap2(inner)
