"""cli/output.py: the text listing keeps one line per item whatever a file is named."""

from __future__ import annotations

import pytest

from cli.output import printable


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("toy/greeter.py", "toy/greeter.py"),
        ("names/new\nline.py", "names/new\\nline.py"),
        ("a\r\tb", "a\\r\\tb"),
        ("bell\x07esc\x1b[31mred", "bell\\x07esc\\x1b[31mred"),
        ("del\x7f next\x85", "del\\x7f next\\x85"),
        ("sep\u2028par\u2029", "sep\\u2028par\\u2029"),
        ("ünï名前 with space.py", "ünï名前 with space.py"),
    ],
)
def test_printable_escapes_control_characters_only(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(text).isprintable()
