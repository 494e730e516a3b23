"""signals/lexical/schema.py: the terms computed in the chunking workers (``analyze``) make
the same document as the builder computing them itself."""

from __future__ import annotations

from engine.types import Chunk, ChunkDraft
from signals.lexical.schema import analyze, document_text, to_document

DRAFTS = [
    ChunkDraft(
        "pkg/http_client.py",
        "python",
        "method",
        "sendRequest",
        "HTTPClient.sendRequest",
        "HTTPClient",
        10,
        12,
        "    x = parseHTTPResponse(self.raw_body)\n    return x",
        "def sendRequest(self):",
        "Send it.",
    ),
    ChunkDraft("pkg/http_client.py", "python", "module", "", "", "", 1, 2, "import os\nimport re"),
    ChunkDraft("README.md", "markdown", "section", "", "", "", 1, 1, "# Usage"),
]


def as_chunk(chunk_id: int, draft: ChunkDraft) -> Chunk:
    return Chunk.from_draft(chunk_id, draft)


def test_analyze_gives_each_chunks_document_text() -> None:
    chunks = [as_chunk(i, d) for i, d in enumerate(DRAFTS, 1)]
    assert analyze(DRAFTS) == [document_text(c) for c in chunks]


def test_a_document_from_analysed_text_equals_one_analysed_by_the_builder() -> None:
    for i, draft in enumerate(DRAFTS, 1):
        chunk = as_chunk(i, draft)
        [text] = analyze([draft])
        assert to_document(chunk, text).to_dict() == to_document(chunk).to_dict()


def test_document_text_fields() -> None:
    whole, parts, name, name_parts, path = document_text(as_chunk(1, DRAFTS[0]))
    # The signature is not in this window's text, so it is indexed with it.
    assert whole.split()[:4] == ["def", "sendrequest", "self", "x"]
    assert "parse http response" in parts
    # The name, then the qualified name, then its segments: the same order in every process.
    assert name == "sendrequest httpclient.sendrequest httpclient sendrequest"
    assert name_parts == "send request"
    assert path == "pkg http client py"
