"""``engine serve``: the MCP server that gives coding agents the search tools over stdio.

The SDK's ``MCPServer`` turns the typed tool functions of ``cli.serve.tools`` into schemas
and validates arguments; its low-level ``Server`` speaks the protocol (initialize and version
negotiation, tools/list, tools/call, ping, notifications). The low-level server is run
directly, over ``cli.serve.transport``, so that malformed input gets a JSON-RPC error.

Tools run on worker threads (searches are blocking calls that release the GIL in the
backends), so calls in flight are served concurrently. Only protocol messages reach stdout;
logs go to stderr. The server ends, with exit code 0, when its stdin closes.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import orjson
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ListToolsResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from cli.serve.indexes import IndexCache
from cli.serve.reindex import CHILD_COMMAND, ReindexJobs
from cli.serve.tools import TOOLS, ToolContext, ToolSpec, repo_names
from cli.serve.tools.common import ClusterSearch
from cli.serve.transport import StdioWire, checked_stdio, claim_stdio
from cli.serve.watching import SERVE_WATCH, RepoWatchers
from engine.errors import EngineError, RepoNotFound
from engine.index.home import Home, engine_home
from engine.indexing.watch import WatchOptions

log = logging.getLogger("cli.serve")

MAX_CONCURRENT_CALLS = 8  # tool calls on worker threads at once; more wait their turn

INSTRUCTIONS = """\
Code search over locally indexed repositories: answers are file paths, exact 1-based line \
ranges and the code itself, within a token budget. Start with listRepos (indexRepository adds \
a folder). Then, instead of grep and reading whole files:
- semanticSearch: code that answers a question or matches a description, ranked (any \
wording; several repositories at once with a list or "*");
- findSymbol: where a name is defined (exact matches first, suggestions when none);
- findReferences: every caller or use of a symbol, before changing it;
- findRelated: code similar to, used by, or using a given file and line;
- assembleContext: the answer plus the definitions it uses, in one budget, before editing;
- fileOutline: a file's definitions with their whole ranges;
- readRange: lines of a file as they are on disk now;
- indexStatus / reindex: freshness; the server reindexes changed files by itself, and \
results from files changed since indexing say so (stale)."""


def error_result(message: str) -> CallToolResult:
    return json_result({"error": message})


def json_result(data: dict[str, Any]) -> CallToolResult:
    """The answer as ``structuredContent`` and as the JSON text block older clients read."""
    text = orjson.dumps(data).decode()
    failed = "error" in data
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=None if failed else data,
        is_error=failed,
    )


# The progress token of the tools/call being served, for a tool that reports progress.
_PROGRESS: contextvars.ContextVar[tuple[Any, Any] | None] = contextvars.ContextVar(
    "progress", default=None
)


def _progress_callback(token: Any, session: Any) -> Callable[[float, float | None, str], None]:
    """A callback any thread may call to send ``notifications/progress`` to the client. Made
    in the event loop: its token lets a plain thread (the reindex job's), not only an anyio
    worker, reach the loop."""
    loop = anyio.lowlevel.current_token()

    def report(done: float, total: float | None, message: str) -> None:
        try:
            anyio.from_thread.run(
                functools.partial(session.send_progress_notification, token, done, total, message),
                token=loop,
            )
        except Exception:  # the client went away: the work goes on
            log.debug("progress notification not sent", exc_info=True)

    return report


def _unknown_repo_message(exc: EngineError, context: ToolContext) -> str:
    names = repo_names(context.home)
    known = f"indexed repositories: {', '.join(names)}" if names else "no repository is indexed yet"
    return f"{exc}; {known}"


def run_tool(spec: ToolSpec, context: ToolContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one tool to a JSON object: a failure becomes ``{"error": ...}``, never an exception."""
    try:
        return spec.run(context, **arguments)
    except RepoNotFound as exc:
        return {"error": _unknown_repo_message(exc, context)}
    except EngineError as exc:
        return {"error": str(exc)}
    except Exception as exc:  # a bug: the agent gets a message, the log gets the traceback
        log.exception("tool %s failed", spec.name)
        return {
            "error": f"internal error in {spec.name} ({type(exc).__name__}: {exc}) — the "
            "server's log (stderr) has the traceback"
        }


def _thread_tool(
    spec: ToolSpec, context: ToolContext, limiter: anyio.CapacityLimiter
) -> Callable[..., Awaitable[CallToolResult]]:
    """An async function with the tool's own signature that runs it on a worker thread."""

    async def call(**arguments: Any) -> CallToolResult:
        started = time.perf_counter()
        if spec.progress:
            asked = _PROGRESS.get()
            arguments["progress"] = None if asked is None else _progress_callback(*asked)
        data = await anyio.to_thread.run_sync(
            functools.partial(run_tool, spec, context, arguments),
            limiter=limiter,
            abandon_on_cancel=True,  # a cancelled call must not hold up shutdown
        )
        result = json_result(data)
        log.debug("%s took %.2f ms", spec.name, (time.perf_counter() - started) * 1000)
        return result

    signature = inspect.signature(spec.run, eval_str=True)
    # The first parameter is the context; ``progress`` is the server's, not the client's.
    parameters = [p for p in list(signature.parameters.values())[1:] if p.name != "progress"]
    call.__name__ = spec.name
    call.__doc__ = spec.description
    # The SDK reads the argument schema from this signature.
    setattr(  # noqa: B010 (mypy does not know function attributes)
        call,
        "__signature__",
        signature.replace(parameters=parameters, return_annotation=CallToolResult),
    )
    return call


def _validation_message(name: str, error: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors(include_url=False)
    )
    return f"invalid arguments for {name}: {problems}"


def build_server(context: ToolContext, tools: Sequence[ToolSpec] = TOOLS) -> Server[Any]:
    """The MCP server answering ``tools`` with ``context``; run it with ``serve_stdio``."""
    registry: MCPServer[Any] = MCPServer("engine")
    limiter = anyio.CapacityLimiter(MAX_CONCURRENT_CALLS)
    for spec in tools:
        registry.add_tool(
            _thread_tool(spec, context, limiter),
            name=spec.name,
            description=spec.description,
            annotations=ToolAnnotations(
                read_only_hint=spec.read_only,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            structured_output=False,
        )
    specs = {spec.name: spec for spec in tools}
    known = set(specs)
    names = ", ".join(spec.name for spec in tools)
    listed: list[ListToolsResult] = []

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        if not listed:
            declared = [
                tool.model_copy(
                    update={"output_schema": specs[tool.name].output.model_json_schema()}
                )
                for tool in await registry.list_tools()
            ]
            listed.append(ListToolsResult(tools=declared))
        return listed[0]

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        name: str = params.name
        if name not in known:
            return error_result(f"unknown tool {name!r} — the tools are: {names}")
        arguments = params.arguments or {}
        accepted = _argument_names(specs[name])
        unknown = [key for key in arguments if key not in accepted]
        if unknown:
            return error_result(
                f"invalid arguments for {name}: unknown argument {', '.join(map(repr, unknown))}"
                f" — its arguments are: {', '.join(accepted)}"
            )
        meta = getattr(params, "meta", None) or getattr(ctx, "meta", None) or {}
        token = meta.get("progress_token") if isinstance(meta, dict) else None
        if token is None and not isinstance(meta, dict):
            token = getattr(meta, "progress_token", None)
        _PROGRESS.set(None if token is None else (token, ctx.session))
        try:
            result = await registry.call_tool(name, arguments)
        except MCPError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return error_result(_validation_message(name, exc.__cause__))
            return error_result(str(exc))
        except Exception as exc:
            log.exception("tool %s failed", name)
            return error_result(f"internal error in {name} ({type(exc).__name__})")
        if not isinstance(result, CallToolResult):  # only an input-required flow returns else
            return error_result(f"{name} returned an unexpected {type(result).__name__}")
        return result

    return Server(
        "engine",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _argument_names(spec: ToolSpec) -> list[str]:
    parameters = list(inspect.signature(spec.run).parameters)[1:]
    return [name for name in parameters if name != "progress"]


def _version() -> str:
    try:
        return version("engine")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(server: Server[Any], wire: StdioWire) -> None:
    async with checked_stdio(wire) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _configure_logging() -> None:
    level = os.environ.get("ENGINE_LOG_LEVEL", "INFO").upper()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)  # the SDK and libraries: warnings only
    logging.getLogger("cli").setLevel(level)


def serve(
    home_root: Path | None = None,
    *,
    reindex_command: Sequence[str] = CHILD_COMMAND,
    watch: WatchOptions | None = SERVE_WATCH,
    cluster: ClusterSearch | None = None,
) -> None:
    """Serve the tools over stdin/stdout until stdin closes.

    ``reindex_command`` runs one reindex (the slug is appended); it prints the summary.
    ``watch``: how opened repositories are watched and reindexed on change (None: not).
    ``cluster``: semanticSearch goes through a Ray cluster's router (``--cluster``).
    """
    wire = claim_stdio()  # before anything that might print is imported
    _configure_logging()
    # SIGTERM (a client giving up on a slow exit) shuts down like Ctrl-C: children stopped.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    from signals.registry import plugins

    home = Home(home_root or engine_home())
    # The cache tells the watchers what it opens; the watchers reindex through the jobs;
    # the jobs refresh the cache (the lambda is called only once all three exist).
    indexes = IndexCache(
        home, plugins(), on_open=lambda slug: watchers.watch(slug) if watch else None
    )
    jobs = ReindexJobs(home.root, command=reindex_command, on_done=indexes.refresh)
    watchers = RepoWatchers(home, jobs, watch or SERVE_WATCH)
    context = ToolContext(home, indexes, jobs, cluster=cluster)
    server = build_server(context)
    log.info("engine serve: index home %s, tools %s", home.root, ", ".join(s.name for s in TOOLS))
    try:
        anyio.run(serve_stdio, server, wire)
    except KeyboardInterrupt:
        log.info("interrupted")
    finally:
        watchers.stop()
        context.jobs.close()  # also ends a reindex a watcher waits for
        watchers.join()
        context.indexes.close()
    log.info("engine serve: stopped")


def main() -> None:
    serve()
