"""Builds and incrementally updates the lexical signal's Tantivy index in a new generation."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from engine.signal import BuildJob, BuildReport
from engine.types import LEXICAL
from signals.lexical.schema import ID, SCHEMA_VERSION, build_schema, to_document

WRITER_HEAP_BYTES = 128_000_000
COMMIT_EVERY = 20_000


def _link_copy(source: Path, target: Path) -> None:
    """Tantivy never rewrites a file in place, so the previous generation's files can be
    shared by hard links; the writer only adds files and replaces meta.json atomically."""
    for entry in source.iterdir():
        if entry.is_file() and not entry.name.startswith(".tantivy-"):
            try:
                os.link(entry, target / entry.name)
            except OSError:
                shutil.copy2(entry, target / entry.name)


class LexicalBuilder:
    name = LEXICAL
    slow = False

    def build(self, job: BuildJob) -> BuildReport:
        import tantivy

        previous_ok = (
            job.previous_dir is not None
            and job.previous_meta.get("schema_version") == SCHEMA_VERSION
            and (job.previous_dir / "meta.json").is_file()
        )
        if previous_ok:
            assert job.previous_dir is not None
            _link_copy(job.previous_dir, job.directory)
            index = tantivy.Index.open(str(job.directory))
            added = list(job.added)
            removed = list(job.removed_ids)
        else:
            index = tantivy.Index(build_schema(), path=str(job.directory))
            added = list(job.source.iter_chunks())
            removed = []
        writer = index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
        for chunk_id in removed:
            writer.delete_documents_by_term(ID, str(chunk_id))
        total = len(added)
        for done, chunk in enumerate(added, 1):
            writer.add_document(to_document(chunk))
            if done % 2000 == 0:
                job.progress("lexical", done, total)
            if done % COMMIT_EVERY == 0:
                writer.commit()
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        docs = index.searcher().num_docs
        job.progress("lexical", total, total)
        return BuildReport(
            ready=True,
            meta={"schema_version": SCHEMA_VERSION, "documents": docs},
            message=f"{docs} documents",
        )
