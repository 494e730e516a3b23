"""engine/chunking/rust_macros.py: items inside item-level macro bodies are definitions."""

from __future__ import annotations

from engine.chunking.chunker import chunk_file

SOURCE = """use crate::task::JoinHandle;

cfg_rt! {
    /// Runs the closure on a thread where blocking is fine.
    pub fn spawn_blocking<F>(f: F) -> JoinHandle<F> {
        todo!()
    }

    cfg_fs! {
        pub struct File {
            std: u8,
        }
    }
}

doc! {macro_rules! select {
    () => {};
}}

impl Runtime {
    cfg_net! {
        fn bind(&self) {}
    }
}

vec![1, 2];
"""


def test_items_inside_macro_bodies_are_found_with_their_lines_and_docs() -> None:
    found = chunk_file("task/blocking.rs", SOURCE, "rust")
    by_name = {d.qualified_name: d for d in found.definitions}
    spawn = by_name["spawn_blocking"]
    assert (spawn.kind, spawn.start_line, spawn.end_line, spawn.name_line) == ("function", 4, 7, 5)
    assert (by_name["File"].kind, by_name["File"].start_line) == ("struct", 10)  # two deep
    assert by_name["select"].kind == "function"  # macro_rules!, inside a `doc!` wrapper
    assert "bind" not in by_name and "Runtime.bind" not in by_name  # scope would be lost
    chunk = next(c for c in found.chunks if c.name == "spawn_blocking")
    assert chunk.docstring == "Runs the closure on a thread where blocking is fine."
    assert chunk.text.splitlines()[1].startswith("    pub fn spawn_blocking")
    lines = SOURCE.splitlines()
    for c in found.chunks:  # every chunk is the file's own text
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


def test_macro_rules_at_top_level_is_a_definition() -> None:
    found = chunk_file("lib.rs", "macro_rules! count {\n    () => { 0 };\n}\n", "rust")
    assert [(d.kind, d.name, d.start_line, d.end_line) for d in found.definitions] == [
        ("function", "count", 1, 3)
    ]
