"""Which language a file is written in, judged from its path (and shebang line when asked).

Names of languages the chunker parses are tree-sitter-language-pack names (``python``,
``tsx``, ``csharp`` ...). Every other text file we index gets a plain name (``json``,
``yaml``, ``text`` ...) and is chunked by line windows. ``None`` means "not a file we
recognise as text": the walker decides whether to sniff or skip it.
"""

from __future__ import annotations

import re

# Languages whose definitions the chunker finds with a tree-sitter grammar.
SYNTAX_LANGUAGES: frozenset[str] = frozenset(
    {
        "python",
        "typescript",
        "tsx",
        "javascript",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "ruby",
        "php",
        "kotlin",
        "scala",
        "swift",
        "bash",
        "lua",
        "haskell",
        "zig",
    }
)

# Every language the chunker parses with tree-sitter: the syntax languages plus markdown,
# which is chunked by heading sections.
LANGUAGES_WITH_GRAMMAR: frozenset[str] = SYNTAX_LANGUAGES | {"markdown"}

_EXTENSIONS: dict[str, str] = {
    # languages with a grammar
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    # .h is shared by C and C++; the C grammar reads C++ headers with ERROR nodes, which
    # the chunker tolerates, while the label stays right for the (more common) C case.
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hh": "cpp",
    "hpp": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "ipp": "cpp",
    "tpp": "cpp",
    "cs": "csharp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "sc": "scala",
    "swift": "swift",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "lua": "lua",
    "md": "markdown",
    "markdown": "markdown",
    "mdx": "markdown",
    # text files chunked by line windows
    "txt": "text",
    "text": "text",
    "rst": "rst",
    "adoc": "asciidoc",
    "org": "org",
    "tex": "latex",
    "json": "json",
    "jsonc": "json",
    "json5": "json",
    "jsonl": "json",
    "ipynb": "json",
    "yml": "yaml",
    "yaml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "cfg": "ini",
    "conf": "ini",
    "properties": "properties",
    "env": "dotenv",
    "xml": "xml",
    "xsd": "xml",
    "xsl": "xml",
    "svg": "xml",
    "plist": "xml",
    "csproj": "xml",
    "html": "html",
    "htm": "html",
    "xhtml": "html",
    "vue": "vue",
    "svelte": "svelte",
    "astro": "astro",
    "css": "css",
    "scss": "scss",
    "sass": "scss",
    "less": "less",
    "sql": "sql",
    "graphql": "graphql",
    "gql": "graphql",
    "proto": "proto",
    "thrift": "thrift",
    "tf": "hcl",
    "hcl": "hcl",
    "cmake": "cmake",
    "mk": "make",
    "dockerfile": "dockerfile",
    "gradle": "groovy",
    "groovy": "groovy",
    "dart": "dart",
    "m": "objc",
    "mm": "objc",
    "r": "r",
    "jl": "julia",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hrl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "mli": "ocaml",
    "clj": "clojure",
    "cljs": "clojure",
    "el": "elisp",
    "lisp": "commonlisp",
    "scm": "scheme",
    "pl": "perl",
    "pm": "perl",
    "zig": "zig",
    "nim": "nim",
    "v": "verilog",
    "sv": "verilog",
    "vhd": "vhdl",
    "f90": "fortran",
    "ps1": "powershell",
    "psm1": "powershell",
    "bat": "batch",
    "cmd": "batch",
    "fish": "fish",
    "vim": "vim",
    "nix": "nix",
    "sol": "solidity",
    "csv": "csv",
    "tsv": "csv",
    "diff": "diff",
    "patch": "diff",
    "cu": "cuda",
    "pyx": "cython",
    "pxd": "cython",
    "j2": "jinja",
    "jinja": "jinja",
    "tmpl": "template",
    "mustache": "template",
    "hbs": "template",
    "erb": "template",
}

# Whole file names (lower-cased) that say what the file is regardless of extension.
_FILE_NAMES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "cmakelists.txt": "cmake",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "podfile": "ruby",
    "vagrantfile": "ruby",
    "brewfile": "ruby",
    "build": "starlark",
    "build.bazel": "starlark",
    "workspace": "starlark",
    "sconstruct": "python",
    "sconscript": "python",
    "jenkinsfile": "groovy",
    "pipfile": "toml",
    "cargo.lock": "toml",
    "poetry.lock": "toml",
    "go.mod": "text",
    "go.sum": "text",
    "readme": "text",
    "license": "text",
    "licence": "text",
    "copying": "text",
    "authors": "text",
    "contributors": "text",
    "changelog": "text",
    "notice": "text",
    "todo": "text",
    "codeowners": "text",
    ".gitignore": "text",
    ".gitattributes": "text",
    ".dockerignore": "text",
    ".editorconfig": "ini",
    ".gitmodules": "ini",
    ".npmrc": "ini",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".zshrc": "bash",
    ".profile": "bash",
    ".env": "dotenv",
}

_SHEBANG = re.compile(r"#!\s*(?:/usr)?(?:/local)?/bin/(?:env\s+(?:-S\s+)?)?([A-Za-z0-9_.+-]+)")

_INTERPRETERS: dict[str, str] = {
    "python": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "bun": "typescript",
    "ts-node": "typescript",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "dash": "bash",
    "ksh": "bash",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "luajit": "lua",
    "perl": "perl",
}


def detect_language(path: str, first_line: str = "") -> str | None:
    """The language of the file at ``path`` (repository-relative, ``/``-separated).

    ``first_line`` is optional: when given, a shebang (``#!/usr/bin/env python3``) names
    the language of a file whose name says nothing (``bin/deploy``).
    """
    name = path.rsplit("/", 1)[-1].lower()
    by_name = _FILE_NAMES.get(name)
    if by_name is not None:
        return by_name
    stem, dot, extension = name.rpartition(".")
    if dot and stem:
        by_extension = _EXTENSIONS.get(extension)
        if by_extension is not None:
            return by_extension
        # "Dockerfile.dev", "Makefile.am", "requirements-dev.in": the first part decides.
        by_stem = _FILE_NAMES.get(stem.split(".", 1)[0])
        if by_stem is not None and by_stem in ("dockerfile", "make"):
            return by_stem
    if first_line.startswith("#!"):
        return _language_of_shebang(first_line)
    return None


def _language_of_shebang(first_line: str) -> str | None:
    match = _SHEBANG.match(first_line)
    if match is None:
        return None
    interpreter = match.group(1)
    # python3.11 -> python, ruby2.7 -> ruby
    base = re.sub(r"[0-9.]+$", "", interpreter)
    return _INTERPRETERS.get(base)


# Every language name the index can hold, for filters that must say when a name is unknown.
KNOWN_LANGUAGES: frozenset[str] = frozenset(
    {*LANGUAGES_WITH_GRAMMAR, *_EXTENSIONS.values(), *_FILE_NAMES.values(), *_INTERPRETERS.values()}
)
