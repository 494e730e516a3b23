"""Per-language chunking: one realistic fixture per language, every chunk and definition.

Each expectation is (start_line, end_line, kind, qualified_name, parent) for chunks and
(kind, qualified_name, name_line, name_start_col, start_line, end_line) for definitions;
lines are 1-based inclusive, columns 0-based UTF-8 bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.chunking import parsing as chunking_parsing
from engine.chunking.chunker import chunk_file
from engine.languages import detect_language
from engine.types import FileChunks

FIXTURES = Path(__file__).parents[2] / "fixtures" / "chunking"

ChunkRow = tuple[int, int, str, str, str]
DefinitionRow = tuple[str, str, int, int, int, int]

EXPECTED: dict[str, tuple[list[ChunkRow], list[DefinitionRow]]] = {
    "greeter.py": (
        [
            (1, 5, "module", "", ""),
            (8, 13, "class", "Greeter", ""),
            (15, 20, "method", "Greeter.greet", "Greeter"),
            (22, 24, "method", "Greeter.default", "Greeter"),
            (27, 28, "function", "top_level", ""),
            (31, 32, "module", "", ""),
        ],
        [
            ("class", "Greeter", 10, 6, 8, 24),
            ("method", "Greeter.greet", 15, 8, 15, 20),
            ("function", "Greeter.greet.shout", 17, 12, 17, 18),
            ("method", "Greeter.default", 23, 8, 22, 24),
            ("function", "top_level", 27, 4, 27, 28),
        ],
    ),
    "shapes.ts": (
        [
            (1, 1, "module", "", ""),
            (3, 6, "interface", "Shape", ""),
            (8, 11, "enum", "Unit", ""),
            (13, 18, "function", "parseBody", ""),
            (20, 21, "class", "Circle", ""),
            (23, 23, "method", "Circle.constructor", "Circle"),
            (25, 28, "method", "Circle.area", "Circle"),
            (29, 29, "class", "Circle", ""),
            (31, 33, "function", "totalArea", ""),
        ],
        [
            ("interface", "Shape", 4, 17, 3, 6),
            ("method", "Shape.area", 5, 2, 5, 5),
            ("enum", "Unit", 8, 12, 8, 11),
            ("function", "parseBody", 16, 13, 13, 18),
            ("class", "Circle", 20, 13, 20, 29),
            ("method", "Circle.constructor", 23, 2, 23, 23),
            ("method", "Circle.area", 26, 2, 25, 28),
            ("function", "totalArea", 31, 16, 31, 33),
        ],
    ),
    "widget.tsx": (
        [
            (1, 3, "module", "", ""),
            (5, 8, "function", "Button", ""),
            (10, 12, "function", "App", ""),
        ],
        [("function", "Button", 6, 13, 5, 8), ("function", "App", 10, 24, 10, 12)],
    ),
    "server.js": (
        [
            (1, 1, "module", "", ""),
            (3, 6, "function", "handle", ""),
            (8, 8, "class", "Server", ""),
            (9, 11, "method", "Server.constructor", "Server"),
            (13, 15, "method", "Server.listen", "Server"),
            (16, 16, "class", "Server", ""),
            (18, 20, "function", "stop", ""),
            (22, 22, "module", "", ""),
        ],
        [
            ("function", "handle", 4, 9, 3, 6),
            ("class", "Server", 8, 6, 8, 16),
            ("method", "Server.constructor", 9, 2, 9, 11),
            ("method", "Server.listen", 13, 2, 13, 15),
            ("function", "stop", 18, 6, 18, 20),
        ],
    ),
    "router.go": (
        [
            (1, 3, "module", "", ""),
            (5, 8, "struct", "Router", ""),
            (10, 13, "interface", "Handler", ""),
            (15, 18, "method", "Router.Handle", "Router"),
            (20, 22, "function", "NewRouter", ""),
        ],
        [
            ("struct", "Router", 6, 5, 5, 8),
            ("interface", "Handler", 11, 5, 10, 13),
            ("method", "Handler.Serve", 12, 1, 12, 12),
            ("method", "Router.Handle", 16, 17, 15, 18),
            ("function", "NewRouter", 20, 5, 20, 22),
        ],
    ),
    "point.rs": (
        [
            (1, 1, "module", "", ""),
            (3, 8, "struct", "Point", ""),
            (10, 12, "trait", "Norm", ""),
            (14, 14, "impl", "Point", ""),
            (15, 18, "method", "Point.origin", "Point"),
            (19, 19, "impl", "Point", ""),
            (21, 21, "impl", "Point", ""),
            (22, 24, "method", "Point.fmt", "Point"),
            (25, 25, "impl", "Point", ""),
            (27, 29, "function", "distance", ""),
        ],
        [
            ("struct", "Point", 5, 11, 3, 8),
            ("trait", "Norm", 10, 10, 10, 12),
            ("method", "Norm.norm", 11, 7, 11, 11),
            ("impl", "Point", 14, 5, 14, 19),
            ("method", "Point.origin", 16, 11, 15, 18),
            ("impl", "Point", 21, 22, 21, 25),
            ("method", "Point.fmt", 22, 7, 22, 24),
            ("function", "distance", 27, 7, 27, 29),
        ],
    ),
    "Greeter.java": (
        [
            (1, 3, "module", "", ""),
            (5, 8, "class", "Greeter", ""),
            (10, 12, "method", "Greeter.Greeter", "Greeter"),
            (14, 17, "method", "Greeter.greet", "Greeter"),
            (19, 21, "interface", "Greeter.Listener", "Greeter"),
            (22, 22, "class", "Greeter", ""),
        ],
        [
            ("class", "Greeter", 7, 13, 5, 22),
            ("method", "Greeter.Greeter", 10, 11, 10, 12),
            ("method", "Greeter.greet", 15, 18, 14, 17),
            ("interface", "Greeter.Listener", 19, 14, 19, 21),
            ("method", "Greeter.Listener.onGreet", 20, 13, 20, 20),
        ],
    ),
    "list.c": (
        [
            (1, 1, "module", "", ""),
            (3, 7, "struct", "node", ""),
            (9, 9, "enum", "color", ""),
            (11, 17, "function", "push", ""),
            (19, 19, "module", "", ""),
        ],
        [
            ("struct", "node", 4, 7, 3, 7),
            ("enum", "color", 9, 28, 9, 9),
            ("function", "push", 12, 13, 11, 17),
        ],
    ),
    "shape.cpp": (
        [
            (1, 3, "module", "", ""),
            (5, 7, "class", "Shape", ""),
            (8, 8, "method", "Shape.Shape", "Shape"),
            (9, 9, "method", "Shape.area", "Shape"),
            (11, 13, "class", "Shape", ""),
            (15, 17, "method", "Shape.perimeter", "Shape"),
            (19, 22, "function", "twice", ""),
            (24, 24, "module", "", ""),
        ],
        [
            ("class", "Shape", 6, 6, 5, 13),
            ("method", "Shape.Shape", 8, 11, 8, 8),
            ("method", "Shape.area", 9, 17, 9, 9),
            ("method", "Shape.perimeter", 15, 14, 15, 17),
            ("function", "twice", 20, 2, 19, 22),
        ],
    ),
    "Greeter.cs": (
        [
            (1, 4, "module", "", ""),
            (5, 8, "class", "Greeter", ""),
            (10, 13, "method", "Greeter.Greeter", "Greeter"),
            (15, 18, "method", "Greeter.Greet", "Greeter"),
            (19, 19, "class", "Greeter", ""),
            (21, 24, "interface", "IGreeter", ""),
            (25, 25, "module", "", ""),
        ],
        [
            ("class", "Greeter", 6, 17, 5, 19),
            ("method", "Greeter.Greeter", 10, 15, 10, 13),
            ("method", "Greeter.Greet", 15, 22, 15, 18),
            ("interface", "IGreeter", 21, 21, 21, 24),
            ("method", "IGreeter.Greet", 23, 15, 23, 23),
        ],
    ),
    "greeter.rb": (
        [
            (1, 1, "module", "", ""),
            (3, 4, "module", "Greeting", ""),
            (5, 7, "class", "Greeting.Greeter", "Greeting"),
            (9, 11, "method", "Greeting.Greeter.initialize", "Greeting.Greeter"),
            (13, 15, "method", "Greeting.Greeter.default", "Greeting.Greeter"),
            (16, 16, "class", "Greeting.Greeter", "Greeting"),
            (18, 20, "method", "Greeting.version", "Greeting"),
            (21, 21, "module", "Greeting", ""),
        ],
        [
            ("module", "Greeting", 4, 7, 3, 21),
            ("class", "Greeting.Greeter", 6, 8, 5, 16),
            ("method", "Greeting.Greeter.initialize", 9, 8, 9, 11),
            ("method", "Greeting.Greeter.default", 13, 13, 13, 15),
            ("method", "Greeting.version", 18, 11, 18, 20),
        ],
    ),
    "Greeter.php": (
        [
            (1, 2, "module", "", ""),
            (4, 7, "class", "Greeter", ""),
            (9, 12, "method", "Greeter.greet", "Greeter"),
            (13, 13, "class", "Greeter", ""),
            (15, 18, "interface", "Greets", ""),
            (20, 23, "function", "helper", ""),
        ],
        [
            ("class", "Greeter", 5, 6, 4, 13),
            ("method", "Greeter.greet", 9, 20, 9, 12),
            ("interface", "Greets", 15, 10, 15, 18),
            ("method", "Greets.greet", 17, 20, 17, 17),
            ("function", "helper", 20, 9, 20, 23),
        ],
    ),
    "Greeter.kt": (
        [
            (1, 1, "module", "", ""),
            (3, 5, "class", "Greeter", ""),
            (7, 9, "method", "Greeter.greet", "Greeter"),
            (11, 11, "class", "Greeter.Companion", "Greeter"),
            (12, 12, "method", "Greeter.Companion.default", "Greeter.Companion"),
            (13, 13, "class", "Greeter.Companion", "Greeter"),
            (14, 14, "class", "Greeter", ""),
            (16, 18, "interface", "Greets", ""),
            (20, 20, "function", "shout", ""),
        ],
        [
            ("class", "Greeter", 4, 6, 3, 14),
            ("method", "Greeter.greet", 7, 8, 7, 9),
            ("class", "Greeter.Companion", 11, 4, 11, 13),
            ("method", "Greeter.Companion.default", 12, 12, 12, 12),
            ("interface", "Greets", 16, 10, 16, 18),
            ("method", "Greets.greet", 17, 8, 17, 17),
            ("function", "shout", 20, 11, 20, 20),
        ],
    ),
    "Greeter.scala": (
        [
            (1, 1, "module", "", ""),
            (3, 5, "class", "Greeter", ""),
            (7, 9, "method", "Greeter.greet", "Greeter"),
            (10, 10, "class", "Greeter", ""),
            (12, 14, "trait", "Greets", ""),
            (16, 16, "class", "Greeter", ""),
            (17, 17, "method", "Greeter.default", "Greeter"),
            (18, 18, "class", "Greeter", ""),
        ],
        [
            ("class", "Greeter", 4, 6, 3, 10),
            ("method", "Greeter.greet", 7, 6, 7, 9),
            ("trait", "Greets", 12, 6, 12, 14),
            ("method", "Greets.greet", 13, 6, 13, 13),
            ("class", "Greeter", 16, 7, 16, 18),
            ("method", "Greeter.default", 17, 6, 17, 17),
        ],
    ),
    "Greeter.swift": (
        [
            (1, 1, "module", "", ""),
            (3, 5, "class", "Greeter", ""),
            (7, 9, "method", "Greeter.init", "Greeter"),
            (11, 13, "method", "Greeter.greet", "Greeter"),
            (14, 14, "class", "Greeter", ""),
            (16, 18, "interface", "Greets", ""),
            (20, 20, "impl", "Greeter", ""),
            (21, 21, "method", "Greeter.wave", "Greeter"),
            (22, 22, "impl", "Greeter", ""),
        ],
        [
            ("class", "Greeter", 4, 13, 3, 14),
            ("method", "Greeter.init", 7, 4, 7, 9),
            ("method", "Greeter.greet", 11, 9, 11, 13),
            ("interface", "Greets", 16, 9, 16, 18),
            ("method", "Greets.greet", 17, 9, 17, 17),
            ("impl", "Greeter", 20, 10, 20, 22),
            ("method", "Greeter.wave", 21, 9, 21, 21),
        ],
    ),
    "deploy.sh": (
        [
            (1, 2, "module", "", ""),
            (4, 7, "function", "log", ""),
            (9, 12, "function", "deploy", ""),
            (14, 14, "module", "", ""),
        ],
        [("function", "log", 5, 0, 4, 7), ("function", "deploy", 9, 9, 9, 12)],
    ),
    "greeter.lua": (
        [
            (1, 1, "module", "", ""),
            (3, 6, "function", "M.greet", "M"),
            (8, 10, "method", "M.reset", "M"),
            (12, 14, "function", "helper", ""),
            (16, 18, "function", "shout", ""),
            (20, 20, "module", "", ""),
        ],
        [
            ("function", "M.greet", 4, 11, 3, 6),
            ("method", "M.reset", 8, 11, 8, 10),
            ("function", "helper", 12, 15, 12, 14),
            ("function", "shout", 16, 6, 16, 18),
        ],
    ),
    # Equations of one function are one definition; a type signature and haddock above it
    # belong to it; `where` bindings are not definitions; an instance is named by its type.
    "Greeter.hs": (
        [
            (1, 3, "module", "", ""),
            (5, 10, "struct", "Greeting", ""),
            (12, 17, "function", "greet", ""),
            (19, 22, "trait", "Polite", ""),
            (24, 25, "impl", "Greeting", ""),
            (27, 28, "function", "version", ""),
            (30, 32, "module", "", ""),  # an operator is no name the symbol index can hold
        ],
        [
            ("struct", "Greeting", 6, 5, 5, 10),
            ("function", "greet", 14, 0, 12, 17),
            ("trait", "Polite", 20, 6, 19, 22),
            ("method", "Polite.polite", 21, 2, 21, 22),
            ("impl", "Greeting", 24, 16, 24, 25),
            ("method", "Greeting.polite", 25, 2, 25, 25),
            ("function", "version", 28, 0, 27, 28),
        ],
    ),
    # Functions and the types a `const` names are definitions; the struct a generic type's
    # function returns holds its methods; doc comments indented inside a container belong to
    # the member below them; other `const`s and `test` blocks are module code.
    "list.zig": (
        [
            (1, 2, "module", "", ""),
            (4, 5, "enum", "Error", ""),
            (7, 8, "enum", "Tone", ""),
            (10, 14, "function", "List", ""),
            (16, 20, "function", "List.append", "List"),
            (21, 22, "function", "List", ""),
            (24, 26, "struct", "Greeter", ""),
            (28, 31, "method", "Greeter.greet", "Greeter"),
            (32, 32, "struct", "Greeter", ""),
            (34, 34, "function", "puts", ""),
            (36, 39, "module", "", ""),
        ],
        [
            ("enum", "Error", 5, 10, 4, 5),
            ("enum", "Tone", 8, 10, 7, 8),
            ("function", "List", 11, 7, 10, 22),
            ("function", "List.append", 17, 15, 16, 20),
            ("struct", "Greeter", 24, 10, 24, 32),
            ("method", "Greeter.greet", 29, 11, 28, 31),
            ("function", "puts", 34, 10, 34, 34),
        ],
    ),
}


def _chunk(name: str) -> FileChunks:
    path = f"src/{name}"
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return chunk_file(path, text, detect_language(path))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chunks_of_each_language(name: str) -> None:
    result = _chunk(name)
    rows = [(c.start_line, c.end_line, c.kind, c.qualified_name, c.parent) for c in result.chunks]
    assert rows == EXPECTED[name][0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_definitions_of_each_language(name: str) -> None:
    result = _chunk(name)
    rows = [
        (d.kind, d.qualified_name, d.name_line, d.name_start_col, d.start_line, d.end_line)
        for d in result.definitions
    ]
    assert rows == EXPECTED[name][1]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_names_sit_at_their_positions(name: str) -> None:
    lines = (FIXTURES / name).read_text(encoding="utf-8").split("\n")
    for definition in _chunk(name).definitions:
        line = lines[definition.name_line - 1].encode()
        written = line[definition.name_start_col : definition.name_end_col].decode()
        # Kotlin's unnamed companion object is called Companion, placed at its keyword.
        assert written in (definition.name, "companion"), definition
        assert definition.qualified_name.endswith(definition.name)


@pytest.mark.parametrize("name", [*sorted(EXPECTED), "guide.md"])
def test_every_line_is_in_a_chunk_and_texts_are_exact(name: str) -> None:
    lines = (FIXTURES / name).read_text(encoding="utf-8").split("\n")
    result = _chunk(name)
    covered = {n for c in result.chunks for n in range(c.start_line, c.end_line + 1)}
    for number, line in enumerate(lines, start=1):
        assert number in covered or not line.strip(), (name, number, line)
    for chunk in result.chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.path == f"src/{name}"


def test_chunk_names_and_kinds_follow_their_definition() -> None:
    chunks = {c.qualified_name: c for c in _chunk("greeter.py").chunks if c.qualified_name}
    greet = chunks["Greeter.greet"]
    assert (greet.name, greet.kind, greet.language) == ("greet", "method", "python")
    assert greet.signature == "def greet(self, name: str) -> str:"
    assert greet.docstring == "Return the greeting for ``name``."
    greeter = chunks["Greeter"]
    assert greeter.signature == "class Greeter:"
    assert greeter.docstring == "Greets people by name."
    assert "@dataclass" in greeter.text  # decorators belong to the chunk
    assert "# Builds greetings" in greeter.text  # and so does the comment directly above
    assert "def shout" in greet.text  # nested functions stay in their function's chunk


@pytest.mark.parametrize(
    ("name", "qualified_name", "signature", "docstring"),
    [
        ("router.go", "Router.Handle", "func (r *Router) Handle(path string, h http.Handler)",
         "Handle registers h for path."),
        ("router.go", "Router", "type Router struct", "Router maps paths to handlers."),
        ("shapes.ts", "parseBody",
         "export const parseBody = async (req: Request): Promise<string> =>",
         "Reads the request body."),
        ("shapes.ts", "Circle.area", "area(): number", "Area in square units."),
        ("point.rs", "Point", "pub struct Point", "A point in the plane."),
        ("point.rs", "Point.origin", "pub fn origin() -> Self", "The origin."),
        ("Greeter.java", "Greeter.greet", "public String greet(String name)", ""),
        ("Greeter.java", "Greeter", "public class Greeter", "Greets people."),
        ("list.c", "push", "struct node *push(struct node *head, int value)",
         "Pushes value in front of head."),
        ("greeter.rb", "Greeting", "module Greeting", "Greeting helpers."),
        ("greeter.lua", "M.greet", "function M.greet(name)", "Greets one person."),
        ("deploy.sh", "log", "log()", "Prints a message to stderr."),
        ("Greeter.kt", "Greeter", "class Greeter(private val prefix: String)", "Greets people."),
        ("Greeter.hs", "greet", "greet (Greeting name False)", "Greets one person by name."),
        ("Greeter.hs", "Polite", "class Polite a where", "Things that can be said politely."),
        ("list.zig", "List.append", "fn append(self: *Self, item: T) !void", "Appends one item."),
        ("list.zig", "Greeter", "const Greeter = struct", ""),
        ("list.zig", "Tone", "const Tone = enum", "What a greeting sounds like."),
    ],
)  # fmt: skip
def test_signatures_and_doc_comments(
    name: str, qualified_name: str, signature: str, docstring: str
) -> None:
    chunk = next(c for c in _chunk(name).chunks if c.qualified_name == qualified_name)
    assert chunk.signature == signature
    assert chunk.docstring == docstring


@pytest.mark.parametrize("name", [*sorted(EXPECTED), "guide.md"])
def test_time_guarded_parse_gives_the_same_result(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Large files are parsed through a read callback (to bound parse time); the tree then
    # holds no source, so names and docstrings must come from the file's bytes all the same.
    plain = _chunk(name)
    monkeypatch.setattr(chunking_parsing, "GUARDED_PARSE_MIN_BYTES", 0)
    assert _chunk(name) == plain


def test_markdown_sections() -> None:
    result = _chunk("guide.md")
    rows = [(c.start_line, c.end_line, c.kind, c.name) for c in result.chunks]
    assert rows == [
        (1, 1, "section", ""),
        (3, 10, "section", "Install"),  # the "#" inside the code fence is not a heading
        (12, 14, "section", "Linux"),
        (16, 19, "section", "Usage"),
    ]
    assert result.chunks[1].signature == "# Install"
    assert result.definitions == []
