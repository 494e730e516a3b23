"""The order the vector signal embeds chunks in (signals/vector/order.py)."""

from __future__ import annotations

from signals.vector.order import embed_priority
from tests.fakes import make_chunk


def test_definitions_then_module_code_then_tests_then_generated() -> None:
    chunks = [
        make_chunk(1, "third_party/lib/x.py", name="vendored"),
        make_chunk(2, "tests/test_app.py", kind="module", name=""),
        make_chunk(3, "tests/test_app.py", name="test_run"),
        make_chunk(4, "app/api_pb2.py", name="generated"),
        make_chunk(5, "app/main.py", kind="module", name=""),
        make_chunk(6, "app/main.py", name="run"),
    ]
    ordered = [c.id for c in sorted(chunks, key=embed_priority)]
    assert ordered == [6, 5, 3, 2, 1, 4]
