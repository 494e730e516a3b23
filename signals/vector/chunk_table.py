"""Which chunks a vector generation holds, with the path, language and kind of each.

The builder needs it to remove the chunks of deleted paths; the signal needs it to apply
query filters before cutting to ``limit``. Stored as ``chunks.npy`` (int64 rows: chunk id
and indexes into the string tables, sorted by id) plus ``chunks.json`` (the string tables),
so a query that filters loads it in a few milliseconds and one that does not never reads it.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.types import Chunk, Filters
from signals.vector.files import ROWS_FILE, STRINGS_FILE, check_table_files

_Row = tuple[str, str, str]  # path, language, kind


class ChunkTable:
    def __init__(self, rows: dict[int, _Row] | None = None) -> None:
        self._rows: dict[int, _Row] = rows or {}

    @classmethod
    def load(cls, directory: Path) -> ChunkTable:
        check_table_files(directory)  # VectorFilesDamaged, a ValueError
        table = np.load(directory / ROWS_FILE)
        strings = json.loads((directory / STRINGS_FILE).read_text(encoding="utf-8"))
        paths, languages, kinds = strings["paths"], strings["languages"], strings["kinds"]
        return cls(
            {int(cid): (paths[p], languages[lang], kinds[k]) for cid, p, lang, k in table.tolist()}
        )

    def save(self, directory: Path) -> None:
        paths: dict[str, int] = {}
        languages: dict[str, int] = {}
        kinds: dict[str, int] = {}
        table = np.zeros((len(self._rows), 4), dtype=np.int64)
        for row, cid in enumerate(sorted(self._rows)):
            path, language, kind = self._rows[cid]
            table[row] = (
                cid,
                paths.setdefault(path, len(paths)),
                languages.setdefault(language, len(languages)),
                kinds.setdefault(kind, len(kinds)),
            )
        np.save(directory / ROWS_FILE, table)
        strings = {"paths": list(paths), "languages": list(languages), "kinds": list(kinds)}
        (directory / STRINGS_FILE).write_text(json.dumps(strings), encoding="utf-8")

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._rows

    def ids(self) -> list[int]:
        return sorted(self._rows)

    def put(self, chunks: Iterable[Chunk]) -> None:
        for chunk in chunks:
            self._rows[chunk.id] = (chunk.path, chunk.language, chunk.kind)

    def remove(self, chunk_ids: Iterable[int]) -> None:
        for cid in chunk_ids:
            self._rows.pop(cid, None)

    def ids_under(self, paths: Sequence[str]) -> list[int]:
        """Chunks whose path is one of ``paths`` or inside one of them (a removed folder)."""
        if not paths:
            return []
        exact = set(paths)
        prefixes = tuple(p.rstrip("/") + "/" for p in paths)
        return [
            cid
            for cid, (path, _, _) in self._rows.items()
            if path in exact or path.startswith(prefixes)
        ]

    def allowed(self, chunk_ids: Sequence[int], filters: Filters) -> npt.NDArray[np.bool_]:
        """Which of ``chunk_ids`` may pass ``filters``. Unknown chunks are let through.

        Languages and kinds are matched exactly; path globs generously (see ``path_may_match``):
        the searcher filters again, so letting a stray hit through costs nothing, while
        dropping one it would keep would lose a result.
        """
        keep = np.ones(len(chunk_ids), dtype=np.bool_)
        for i, cid in enumerate(chunk_ids):
            row = self._rows.get(cid)
            if row is not None:
                keep[i] = _passes(row, filters)
        return keep


def _passes(row: _Row, filters: Filters) -> bool:
    path, language, kind = row
    if filters.languages and language not in filters.languages:
        return False
    if filters.kinds and kind not in filters.kinds:
        return False
    return not filters.path_globs or any(path_may_match(path, g) for g in filters.path_globs)


def path_may_match(path: str, glob: str) -> bool:
    """A superset of the usual glob dialects: fnmatch (``*`` crosses ``/``), ``**/`` also
    matching no folder, a bare folder name matching everything inside it, and a pattern
    without ``/`` matching the file name."""
    glob = glob.removeprefix("./")
    candidates = {glob, glob.replace("**/", ""), glob.rstrip("/") + "/*"}
    if any(fnmatch.fnmatchcase(path, c) for c in candidates):
        return True
    if "/" not in glob.rstrip("/"):
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], glob) or any(
            fnmatch.fnmatchcase(part, glob.rstrip("/")) for part in path.split("/")[:-1]
        )
    return False
