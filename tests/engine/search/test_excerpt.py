from __future__ import annotations

from engine.search.excerpt import excerpt, excerpt_json
from engine.types import Result


def long_result(lines: list[str], start: int = 10) -> Result:
    return Result(
        "toy", "a.py", start, start + len(lines) - 1, "Big", "\n".join(lines), 0.5, ("lexical",)
    )


BODY = ["class Big:"] + [f"    x{n} = {n}" for n in range(1, 60)]


def test_a_short_result_is_shown_whole() -> None:
    assert excerpt(long_result(BODY[:10]), "anything", max_lines=24) is None


def test_the_window_holds_the_query_words_and_keeps_exact_lines() -> None:
    lines = list(BODY)
    lines[40] = "    def retry_delay(self, attempt):"
    lines[41] = "        return min(30, 2 ** attempt)  # the retry delay grows"
    result = long_result(lines)
    cut = excerpt(result, "how is the retry delay computed", max_lines=8)
    assert cut is not None
    shown = cut.result
    assert shown.start_line <= 10 + 40 and shown.end_line >= 10 + 41
    assert shown.end_line - shown.start_line + 1 == 8
    # The content is exactly the file's lines start_line..end_line.
    offset = shown.start_line - result.start_line
    assert shown.content == "\n".join(lines[offset : offset + 8])
    assert (cut.chunk_start_line, cut.chunk_end_line) == (10, 69)
    assert cut.header == "class Big:"
    data = excerpt_json({"startLine": 10, "endLine": 69, "content": result.content}, cut)
    assert data["detail"] == "excerpt"
    assert data["chunk"] == {"startLine": 10, "endLine": 69}
    assert (data["startLine"], data["endLine"]) == (shown.start_line, shown.end_line)


def test_without_the_query_words_the_head_is_shown_and_needs_no_header() -> None:
    cut = excerpt(long_result(BODY), "something unrelated entirely", max_lines=5)
    assert cut is not None
    assert (cut.result.start_line, cut.result.end_line) == (10, 14)
    assert cut.header == ""
