from __future__ import annotations

from engine.context.expansion import path_distance
from engine.context.used_names import code_uses, is_code


def test_python_uses_skip_strings_comments_and_docstrings() -> None:
    uses = code_uses(
        'def f(x):\n    """set the buffer"""\n    # flush here\n'
        "    y = self.write(x).close()  # trailing\n"
        "    super().init(a.b, 'buffer size')\n"
        "    return shout(Greeter.default())\n",
        "python",
    )
    assert "set" not in uses and "buffer" not in uses and "flush" not in uses
    assert uses["write"] == {"self"}
    assert uses["init"] == {"self"}
    assert uses["close"] == {"other"}
    assert uses["b"] == {"other"}
    assert uses["shout"] == {"bare"}
    assert uses["Greeter"] == {"bare"}
    assert uses["default"] == {"other"}


def test_c_like_uses_skip_block_comments_and_template_strings() -> None:
    uses = code_uses(
        "/* render everything */\nfunction go(a) {\n  const s = `render ${a}`; // render\n"
        "  return this.parse(a) + lib.render(a) + 'x';\n}",
        "typescript",
    )
    assert uses["render"] == {"other"}
    assert uses["parse"] == {"self"}
    assert uses["lib"] == {"bare"}


def test_rust_lifetimes_do_not_swallow_code() -> None:
    uses = code_uses("fn f<'a>(x: &'a str) -> Thing<'a> { helper(x) }", "rust")
    assert uses["helper"] == {"bare"}
    assert "Thing" in uses


def test_only_code_languages_are_resolved() -> None:
    assert is_code("python") and is_code("go")
    assert not is_code("markdown") and not is_code("rst") and not is_code("json")


def test_path_distance() -> None:
    assert path_distance("a/b.py", "a/b.py") == 0
    assert path_distance("a/b.py", "a/c.py") == 1
    assert path_distance("a/b.py", "a/x/c.py") == 2
    assert path_distance("a/b.py", "d/c.py") == 3
    assert path_distance("b.py", "c.py") == 1


def test_haskell_comments_are_no_uses() -> None:
    uses = code_uses("greet name = render name -- shout here\n{- and loud -}\n", "haskell")
    assert "render" in uses and "shout" not in uses and "loud" not in uses


def test_zig_multiline_strings_are_no_uses() -> None:
    uses = code_uses("const usage =\n    \\\\--help  print usage\n;\nrender(usage);", "zig")
    assert "render" in uses and "print" not in uses and "help" not in uses
