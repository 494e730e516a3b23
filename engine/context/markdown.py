"""The context as Markdown for a model to read: one heading and fenced code block per block.

Rendered from the JSON object of ``engine.context.assembly.context_json``, so the CLI and an
agent tool
print the same thing. Each block is headed ``path:start-end (symbol)``; its code follows in a
fence tagged with the language, longer than any backtick run inside the code so that code
holding a fence cannot end the block early.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_BACKTICKS = re.compile(r"`{3,}")


def _fence(content: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(content)), default=2)
    return "`" * (longest + 1)


def _heading(item: Mapping[str, Any]) -> str:
    where = f"{item['filePath']}:{item['startLine']}-{item['endLine']}"
    name = item.get("qualifiedName") or item.get("symbolName")  # one scheme: engine.qualified
    return f"{where} ({name})" if name else where


def _blocks(items: Sequence[Mapping[str, Any]], *, expanded: bool) -> list[str]:
    out: list[str] = []
    for item in items:
        heading = f"### {_heading(item)}"
        if expanded and item.get("usedBy"):
            users = ", ".join(u["symbolName"] or u["filePath"] for u in item["usedBy"])
            heading += f" — used by {users}"
        if item["detail"] != "full":
            heading += f" [{item['detail']} only]"
        out.append(heading)
        if item["content"]:
            fence = _fence(item["content"])
            out.append(f"{fence}{item.get('language', '')}\n{item['content']}\n{fence}")
        out.append("")
    return out


def context_markdown(data: Mapping[str, Any]) -> str:
    """The context object as Markdown (an ``{"error": ...}`` object as its message)."""
    if "error" in data:
        return f"error: {data['error']}\n"
    lines = [f"# Context for: {data['query']}", ""]
    if data.get("warning"):
        lines += [f"> warning: {data['warning']}", ""]
    if data.get("lowConfidence"):
        lines += ["> low confidence: nothing matched the query well", ""]
    lines += ["## Code that answers the query", ""]
    lines += _blocks(data["primary"], expanded=False) or ["(nothing found)", ""]
    if data["expanded"]:
        lines += ["## Definitions it uses", ""]
        lines += _blocks(data["expanded"], expanded=True)
    if "tests" in data:
        lines += ["## Tests that exercise it", ""]
        for test in data["tests"]:
            exact = "" if test["exact"] else " (name match)"
            name = f" ({test['symbolName']})" if test["symbolName"] else ""
            lines.append(
                f"- {test['filePath']}:{test['startLine']}-{test['endLine']}{name} "
                f"uses {', '.join(test['tests'])}{exact}"
            )
        if not data["tests"]:
            lines.append("(none found)")
        elif data.get("testsFound", 0) > len(data["tests"]):
            lines.append(f"- … {data['testsFound'] - len(data['tests'])} more")
        lines.append("")
    if data["dropped"]:
        lines.append(f"_{len(data['dropped'])} more left out for lack of budget:_")
        for item in data["dropped"]:
            lines.append(f"- {item['role']}: {_heading(item)}")
        lines.append("")
    lines.append(f"_{data['tokens']} of {data['budget']} tokens ({data['tokenizer']})_")
    return "\n".join(lines) + "\n"
