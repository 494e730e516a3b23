from __future__ import annotations

from signals.vector.documents import DOC_FORMAT, FIRST_PART_CHARS, document_parts
from tests.fakes import make_chunk

BODY = '''def parseHTTPRequest(raw):
    """Parse a raw HTTP request into headers and body."""
    head, _, body = raw.partition(b"\\r\\n\\r\\n")
    return head, body'''


def test_format_version_is_recorded() -> None:
    assert isinstance(DOC_FORMAT, int)


def test_document_leads_with_kind_name_path_signature_docstring() -> None:
    chunk = make_chunk(
        7,
        "net/http.py",
        BODY,
        name="parseHTTPRequest",
        signature="def parseHTTPRequest(raw):",
        docstring="Parse a raw HTTP request into headers and body.",
    )
    (doc,) = document_parts(chunk)
    lines = doc.split("\n")
    assert lines[0] == "function parseHTTPRequest (parse http request)"
    assert lines[1] == "net/http.py"
    assert lines[2] == "def parseHTTPRequest(raw):"
    assert lines[3] == "Parse a raw HTTP request into headers and body."
    # The body follows without repeating the signature or the docstring (nor its quotes).
    assert lines[4:] == [
        '    head, _, body = raw.partition(b"\\r\\n\\r\\n")',
        "    return head, body",
    ]


def test_docstring_found_despite_different_indentation_and_comment_markers() -> None:
    text = "/**\n * Add two\n *   numbers.\n */\nfunction add(a, b) { return a + b; }"
    chunk = make_chunk(
        1, "m.js", text, name="add", language="javascript", docstring="Add two numbers."
    )
    (doc,) = document_parts(chunk)
    assert doc.count("Add two") == 1
    assert doc.endswith("function add(a, b) { return a + b; }")


def test_snake_case_name_is_not_split_again_and_unnamed_chunks_have_kind_only() -> None:
    (named,) = document_parts(make_chunk(1, "a.py", "x = 1", name="read_config"))
    assert named.split("\n")[0] == "function read_config"
    (window,) = document_parts(make_chunk(2, "notes.txt", "some text", name="", kind="window"))
    assert window == "window\nnotes.txt\nsome text"


def test_path_can_be_left_out() -> None:
    (doc,) = document_parts(make_chunk(1, "a/b.py", "return 1", name="f"), include_path=False)
    assert "a/b.py" not in doc


def test_long_body_gets_windows_only_when_asked() -> None:
    text = "\n".join(f"    value_{i} = compute_{i}(value_{i - 1})" for i in range(200))
    chunk = make_chunk(1, "long.py", text, name="pipeline")
    assert len(document_parts(chunk, max_parts=1)) == 1
    parts = document_parts(chunk, max_parts=4)
    assert len(parts) == 4
    assert parts[0].startswith("function pipeline\nlong.py\n")
    for part in parts[1:]:
        assert part.startswith("function pipeline\nlong.py\n")
    # The first part is the whole document (the model truncates it); later windows start
    # about where that truncation happens and move forward.
    assert len(parts[0]) > FIRST_PART_CHARS
    assert "value_0 =" not in parts[1]
    first_lines = [int(line.split("_")[1].split(" ")[0]) for line in parts[1].split("\n")[2:]]
    last_lines = [int(line.split("_")[1].split(" ")[0]) for line in parts[3].split("\n")[2:]]
    assert 15 < first_lines[0] < first_lines[-1] < last_lines[0] < last_lines[-1]


def test_short_body_stays_one_part_even_when_windows_are_allowed() -> None:
    assert len(document_parts(make_chunk(1, "a.py", "return 1", name="f"), max_parts=8)) == 1
