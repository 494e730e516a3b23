"""The files of a vector folder, and a check that they are whole without loading them.

``VectorStore.load`` and ``ChunkTable.load`` each check their half first; the plugin's
``check`` (``engine status``, every ``engine reindex``) runs ``check_files`` alone, so this
module imports neither numpy nor FAISS and reads a few bytes per file: each file is there,
starts (and a JSON file ends) as its format does, and has the size it was written with
(``layout.json`` records it since the check came in; a folder written before is checked
without sizes). Damage deeper inside a file is found by the load.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import SignalUnavailable

INDEX_FILE = "vectors.faiss"
TOMBSTONES_FILE = "tombstones.npy"
LAYOUT_FILE = "layout.json"
ROWS_FILE = "chunks.npy"  # signals/vector/chunk_table.py
STRINGS_FILE = "chunks.json"

# The fourcc FAISS writes first for the indexes faiss_index.py makes (IndexIDMap2; IndexIDMap;
# IndexIVFScalarQuantizer, ivf.py).
_FAISS_MAGIC = (b"IxM2", b"IxMp", b"IwSq")
_NPY_MAGIC = b"\x93NUMPY"


class VectorFilesDamaged(ValueError):
    """A file of the vector folder is missing, cut short or not of its format. A ValueError,
    which every caller of ``VectorStore.load`` already takes as "unreadable"."""


def unreadable(directory: Path, err: Exception) -> SignalUnavailable:
    """The error for a vector folder that cannot be read, as ``open`` and ``check`` give it."""
    return SignalUnavailable(
        f"the vector index in {directory} is unreadable ({err}); run `engine index` again"
    )


def written_sizes(directory: Path) -> dict[str, int]:
    """The sizes ``layout.json`` records, of the files written so far (faiss_index.py)."""
    return {
        name: (directory / name).stat().st_size
        for name in (INDEX_FILE, TOMBSTONES_FILE)
        if (directory / name).is_file()
    }


def check_files(directory: Path) -> None:
    """Raises VectorFilesDamaged unless every file of the folder is found whole."""
    check_index_files(directory)
    check_table_files(directory)


def check_index_files(directory: Path) -> dict[str, Any]:
    """The FAISS index's layout (``layout.json``), once its files are found whole."""
    try:
        layout = json.loads((directory / LAYOUT_FILE).read_bytes())
    except FileNotFoundError:
        raise VectorFilesDamaged(f"{LAYOUT_FILE} is missing") from None
    except (OSError, ValueError) as exc:
        raise VectorFilesDamaged(f"{LAYOUT_FILE} is unreadable ({exc})") from None
    if not isinstance(layout, dict):
        raise VectorFilesDamaged(f"{LAYOUT_FILE} is not an object")
    sizes = layout.get("bytes")
    sizes = sizes if isinstance(sizes, Mapping) else {}
    _check(directory / INDEX_FILE, _FAISS_MAGIC, sizes.get(INDEX_FILE))
    if TOMBSTONES_FILE in sizes:
        _check(directory / TOMBSTONES_FILE, (_NPY_MAGIC,), sizes[TOMBSTONES_FILE])
    return layout


def check_table_files(directory: Path) -> None:
    """The chunk table's files (signals/vector/chunk_table.py) begin and end as written."""
    rows = directory / ROWS_FILE
    _check(rows, (_NPY_MAGIC,), _npy_size(rows))
    _check(directory / STRINGS_FILE, (b"{",), None, last=b"}")


def _npy_size(path: Path) -> int | None:
    """The size an ``.npy`` file's own header gives (format 1.0: magic, version, a 2-byte
    header length, the header: a dict literal with ``descr`` and ``shape``); None when the
    header does not say, which the magic check then reports."""
    try:
        with path.open("rb") as handle:
            start = handle.read(10)
            length = int.from_bytes(start[8:10], "little")
            header = handle.read(length).decode("latin-1")
        fields = ast.literal_eval(header)
        itemsize = int(str(fields["descr"])[2:])  # "<i8": int64 in 8 bytes
        count = math.prod(int(n) for n in fields["shape"])
    except (OSError, ValueError, SyntaxError, KeyError, TypeError):
        return None
    if start[6:8] != b"\x01\x00":
        return None
    return len(start) + length + count * itemsize


def _check(path: Path, magic: tuple[bytes, ...], size: object, *, last: bytes = b"") -> None:
    try:
        with path.open("rb") as handle:
            head = handle.read(max(len(m) for m in magic))
            actual = handle.seek(0, 2)
            tail = b""
            if last and actual >= len(last):
                handle.seek(actual - len(last))
                tail = handle.read(len(last))
    except FileNotFoundError:
        raise VectorFilesDamaged(f"{path.name} is missing") from None
    except OSError as exc:
        raise VectorFilesDamaged(f"{path.name} is unreadable ({exc.strerror or exc})") from None
    if isinstance(size, int) and actual != size:
        raise VectorFilesDamaged(f"{path.name} is {actual} bytes, {size} were written")
    if not any(head.startswith(m) for m in magic) or tail != last:
        raise VectorFilesDamaged(f"{path.name} is not a file this signal wrote")
