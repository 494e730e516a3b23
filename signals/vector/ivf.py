"""The approximate layout of a large vector index: an inverted file over int8 codes.

``IndexIVFScalarQuantizer``: k-means splits the vectors into ``lists_for(n)`` lists
(trained on a sample), each vector is stored in its nearest list as the int8 code of its
residual to the list's centre (384 bytes plus an 8-byte id per vector: 392 MB per 1M,
against 768 MB for the flat fp16 scan), and a search scans the ``PROBES`` lists nearest to
the query. Ids live in the lists, so ``add_with_ids`` and ``remove_ids`` work on the index
itself: no ``IndexIDMap`` (whose removal assumes the inner index renumbers, which IVF does
not) and no tombstones.

Why these numbers (BENCHMARKS.md, "Vector search at scale"; real MiniLM vectors of the
dev-set repositories, replicated with perturbation past their 88k; 717 real queries; recall@10
against exact float32 search): about 4·√n lists, rounded to a power of two, and 256 probes at
every size. The final code measured recall 0.980 at 250k (2,048 lists, 3.3 ms a query) and
0.970 at 1M (4,096 lists, 6.6 ms), against 0.999 and 114 ms for the exact scan at 1M; int8
codes alone cap recall at 0.985 (an exhaustive int8 scan at 1M). Fewer lists cost more
time for less recall (1M, 1,024 lists, 128 probes: 0.959 at 12.6 ms), fewer probes missed
0.95 (1M, 64 probes: 0.942-0.946). Training on 40 points per list is what k-means asks
for; at 1M a build from scratch took 44-120 s on two loaded cores. Vectors added after
training keep the lists and ranges trained then; ``settle`` trains again once the index
passes a size where ``lists_for`` doubles (the power of two rounds up at 131k, 524k, 2.1M).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from signals.vector.embedder import FloatMatrix

PROBES = 256
POINTS_PER_LIST = 40  # k-means warns below 39 training points per centre
MIN_SAMPLE = 20_000  # below this many vectors, training reads them all (it takes < 1 s)
SAMPLE_SEED = 0
# The int8 range per dimension is the training residuals' range widened by this fraction
# each side: a vector added later with a component outside it is clipped. On real MiniLM
# vectors (81k, trained on 41k) the worst 1 - cosine of a decoded vector fell from 3.8e-3
# to 2.8e-4 for 0.003 less recall@10 (0.9826 → 0.9798 at 256 probes).
RANGE_MARGIN = 0.2

IdArray = npt.NDArray[np.int64]


def lists_for(count: int) -> int:
    """Lists for ``count`` vectors: the power of two nearest 4·√count, and never so many that
    a list gets fewer than ``POINTS_PER_LIST`` training points."""
    if count <= 0:
        return 1
    nearest = 1 << max(0, round(math.log2(4 * math.sqrt(count))))
    return max(1, min(nearest, count // POINTS_PER_LIST))


def build(dim: int, ids: IdArray, vectors: FloatMatrix) -> Any:
    """A trained IVF index holding ``vectors`` under ``ids``; training reads a fixed sample,
    so the same vectors give the same index."""
    import faiss

    count = len(ids)
    lists = lists_for(count)
    index = faiss.IndexIVFScalarQuantizer(
        faiss.IndexFlatIP(dim),
        dim,
        lists,
        faiss.ScalarQuantizer.QT_8bit,
        faiss.METRIC_INNER_PRODUCT,
        True,  # by residual: codes quantise the offset from the list's centre
    )
    index.sq.rangestat = faiss.ScalarQuantizer.RS_minmax
    index.sq.rangestat_arg = RANGE_MARGIN
    data = np.ascontiguousarray(vectors, np.float32)
    sample_size = min(count, max(POINTS_PER_LIST * lists, MIN_SAMPLE))
    if sample_size < count:
        rows = np.random.default_rng(SAMPLE_SEED).choice(count, sample_size, replace=False)
        sample = data[np.sort(rows)]
    else:
        sample = data
    if count:
        index.train(sample)
        index.add_with_ids(data, np.asarray(ids, np.int64))
    set_probes(index)
    return index


def set_probes(index: Any) -> None:
    """The probes for this engine's recall goal; a loaded index gets them whatever nprobe it
    was written with."""
    index.nprobe = min(PROBES, int(index.nlist))


def is_ivf(index: Any) -> bool:
    return hasattr(index, "invlists") and hasattr(index, "nprobe")


def ids_of(index: Any) -> IdArray:
    """Every id the index holds, list by list."""
    parts = [_list_ids(index, n) for n in range(int(index.nlist)) if index.invlists.list_size(n)]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def contents(index: Any) -> tuple[IdArray, FloatMatrix]:
    """Every (id, vector) the index holds, decoded from its int8 codes (a rebuild's input).

    ``sa_decode`` reads a list number before each code (little-endian, as
    ``IndexIVF::encode_listno`` writes it), so each list's codes get theirs prefixed."""
    import faiss

    width = int(index.coarse_code_size())
    invlists = index.invlists
    ids: list[IdArray] = []
    codes: list[npt.NDArray[np.uint8]] = []
    for number in range(int(index.nlist)):
        size = invlists.list_size(number)
        if not size:
            continue
        raw = faiss.rev_swig_ptr(invlists.get_codes(number), size * invlists.code_size)
        prefix = np.frombuffer(number.to_bytes(width, "little"), np.uint8)
        rows = np.asarray(raw, np.uint8).reshape(size, -1)
        codes.append(np.hstack([np.broadcast_to(prefix, (size, width)), rows]))
        ids.append(_list_ids(index, number))
    if not ids:
        return np.zeros(0, np.int64), np.zeros((0, int(index.d)), np.float32)
    vectors = index.sa_decode(np.ascontiguousarray(np.vstack(codes)))
    return np.concatenate(ids), np.asarray(vectors, np.float32)


def _list_ids(index: Any, number: int) -> IdArray:
    import faiss

    invlists = index.invlists
    raw = faiss.rev_swig_ptr(invlists.get_ids(number), invlists.list_size(number))
    return np.array(raw, dtype=np.int64)  # a copy: the list's own memory may move
