"""Language detection from paths and shebangs."""

from __future__ import annotations

import pytest

from engine.chunking.grammars import grammar_languages
from engine.languages import LANGUAGES_WITH_GRAMMAR, SYNTAX_LANGUAGES, detect_language


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/app.py", "python"),
        ("types/index.d.ts", "typescript"),
        ("ui/Button.tsx", "tsx"),
        ("web/app.jsx", "javascript"),
        ("lib/esm.mjs", "javascript"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("src/list.c", "c"),
        ("include/list.h", "c"),
        ("src/shape.cpp", "cpp"),
        ("include/shape.hpp", "cpp"),
        ("src/Greeter.cs", "csharp"),
        ("lib/greeter.rb", "ruby"),
        ("Rakefile", "ruby"),
        ("src/index.php", "php"),
        ("app/Main.kt", "kotlin"),
        ("build.gradle.kts", "kotlin"),
        ("src/Main.scala", "scala"),
        ("Sources/App.swift", "swift"),
        ("scripts/deploy.sh", "bash"),
        ("init.lua", "lua"),
        ("README.md", "markdown"),
        ("docs/Guide.MD", "markdown"),
        ("notes.txt", "text"),
        ("LICENSE", "text"),
        ("package.json", "json"),
        (".github/workflows/ci.yml", "yaml"),
        ("pyproject.toml", "toml"),
        ("templates/index.html", "html"),
        ("static/site.css", "css"),
        ("db/schema.sql", "sql"),
        ("Dockerfile", "dockerfile"),
        ("docker/Dockerfile.dev", "dockerfile"),
        ("Makefile", "make"),
        ("CMakeLists.txt", "cmake"),
        (".gitignore", "text"),
    ],
)
def test_detects_by_extension_and_file_name(path: str, language: str) -> None:
    assert detect_language(path) == language


@pytest.mark.parametrize(
    "path", ["image.png", "archive.tar.gz", "bin/tool", "Makefile2", ".hidden"]
)
def test_unknown_files_are_none(path: str) -> None:
    assert detect_language(path) is None


@pytest.mark.parametrize(
    ("first_line", "language"),
    [
        ("#!/usr/bin/env python3", "python"),
        ("#!/usr/bin/python3.11 -u", "python"),
        ("#!/bin/bash", "bash"),
        ("#!/usr/bin/env -S node --experimental", "javascript"),
        ("#!/usr/bin/env ruby", "ruby"),
        ("#!/usr/bin/env unknown-thing", None),
        ("print('no shebang')", None),
    ],
)
def test_shebang_names_a_file_without_extension(first_line: str, language: str | None) -> None:
    assert detect_language("bin/tool", first_line) == language


def test_extension_wins_over_shebang() -> None:
    assert detect_language("tool.rb", "#!/usr/bin/env python3") == "ruby"


def test_every_syntax_language_has_a_grammar() -> None:
    assert grammar_languages() == SYNTAX_LANGUAGES
    assert SYNTAX_LANGUAGES | {"markdown"} == LANGUAGES_WITH_GRAMMAR
