"""The MCP tools: ``search_literature``, ``research`` (with progress notifications), ``get_run``, the library's
(``library_add``, files from the configured library folder only; ``library_documents``; ``library_search``) and
the watches'.

Research runs go through the ``RunManager``, so a run started by an MCP client is queued with the page's
runs, listed on the page, and kept in the runs folder. Failures come back as tool errors in one line.
Docstrings and field descriptions are written for the calling model: they are what it reads."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from mcp_types import Tool as ToolDescription
from pydantic import Field, StrictBool, StrictInt, ValidationError

from deepcritical import __version__
from deepcritical.config import Settings
from deepcritical.errors import DeepCriticalError
from deepcritical.mcp.about import INSTRUCTIONS, SOURCES_IN_WORDS
from deepcritical.mcp.library_tool import register_library_tools
from deepcritical.mcp.results import EvidenceItem, LiteratureSearch, RunResult, progress_line, run_failure, run_result
from deepcritical.mcp.watch_tools import register_watch_tools
from deepcritical.options import OutputMode, ReaderName
from deepcritical.run.request import RunRequest
from deepcritical.run.search import run_search
from deepcritical.run.store import without_paths
from deepcritical.service.admission import RunRateLimit
from deepcritical.service.manager import RunManager
from deepcritical.source_table import KNOWN_SOURCES, sources_help
from deepcritical.text import MAX_QUESTION_CHARS, not_utf8, one_line

MAX_RUN_ID_CHARS = 64
SourcesArgument = Annotated[list[str] | None, Field(description=sources_help(), max_length=len(KNOWN_SOURCES))]


# An absolute path in a message (not a URL's path: no scheme, host or word just before its first slash).
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[^\s/'\"()<>;,]+/)*([^\s/'\"()<>;,]*)")


def hide_paths(message: str, settings: Settings, runs_dir: Path) -> str:
    """A message for a client on another machine: the server's own folders named by what sets them
    (``run.store.without_paths``), and any other absolute path cut to its last part, the file's name."""
    named = without_paths(message, settings, runs_dir, *([settings.library_folder] if settings.library_folder else []))
    return ABSOLUTE_PATH.sub(lambda match: match.group(1) or "/", named or "")


class StrictMCPServer(MCPServer[Any]):
    """An MCP server whose tools refuse arguments they do not take, with a message naming them: a misspelt
    ``max_iteration`` would otherwise be dropped without a word and the call run with the default. The
    advertised input schemas say so too (``additionalProperties: false``). ``hide`` rewrites each error's
    message for the client (over HTTP: without the server's paths)."""

    hide: Callable[[str], str] | None = None

    async def list_tools(self) -> list[ToolDescription]:
        return [
            tool.model_copy(update={"input_schema": {**tool.input_schema, "additionalProperties": False}})
            for tool in await super().list_tools()
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        for tool in await super().list_tools():
            if tool.name != name:
                continue
            known = sorted(tool.input_schema.get("properties", {}))
            unknown = [repr(key[:40]) for key in arguments if key not in known]
            if unknown:
                raise ToolError(
                    f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown[:5])}; "
                    f"it takes {', '.join(known)}"
                )
        for key, value in arguments.items():
            if problem := _not_utf8_in(value):
                raise ToolError(f"{name}: {key[:40]!r} {problem}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:  # every error one line: pydantic's spans four, with the caller's value
            cause = error.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: {_argument_problems(cause)}") from cause
            if isinstance(cause, DeepCriticalError):  # anticipated wherever a tool raises it: its reason, said
                error = ToolError(f"Error executing tool {name}: {cause}")
            message = one_line(str(error))
            raise type(error)(self.hide(message) if self.hide is not None else message) from cause


def _not_utf8_in(value: object) -> str | None:
    """Why an argument (a string, or strings in a list or an object) is not text to keep, or None."""
    if isinstance(value, str):
        return not_utf8(value)
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((problem for item in value if (problem := _not_utf8_in(item))), None)
    return None


def _argument_problems(error: ValidationError) -> str:
    """``max_iterations: Input should be less than or equal to 20``: each field and what is wrong, no value."""
    problems = [f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors()]
    return "; ".join(problems[:5])


def _client(ctx: Context) -> str:
    """The client's address over HTTP (as the API counts it), ``stdio`` for the local stdio client."""
    request = ctx.request_context.request
    client = getattr(request, "client", None)
    host = getattr(client, "host", None)
    return host if isinstance(host, str) else "stdio"


def _option(name: str) -> str:
    """A run option's description, as the one run request states it."""
    return RunRequest.model_fields[name].description or name


def _first_error(error: ValidationError) -> str:
    """``field: message`` of a request's first invalid value."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"][:1]) or "request"
    return one_line(f"{field}: {first['msg']}")


def build_mcp_server(
    manager: RunManager, settings: Settings, rate_limit: RunRateLimit | None = None, *, over_http: bool = False
) -> MCPServer[Any]:
    """The DeepCritical MCP server over ``manager``'s runs. ``rate_limit`` is shared with the HTTP API when
    both serve the same runs, so that new runs are limited per client across both. ``over_http``: its clients
    may be on other machines, and its errors and results name no path of the server's."""
    server = StrictMCPServer("deepcritical", instructions=INSTRUCTIONS, version=__version__)
    if over_http:
        server.hide = partial(hide_paths, settings=settings, runs_dir=manager.runs_dir)
    limit = rate_limit or RunRateLimit(settings.runs_per_minute)
    _add_search_tool(server, manager, settings, limit)
    _add_research_tool(server, manager, limit)
    _add_library_and_run_tools(server, manager, over_http=over_http)
    register_watch_tools(server, settings, over_http=over_http)  # watch_add, watch_list, watch_changes
    return server


def _add_search_tool(server: MCPServer[Any], manager: RunManager, settings: Settings, limit: RunRateLimit) -> None:
    """``search_literature``: one search of the sources, on the server's resources, limited as runs are."""

    @server.tool(
        annotations=ToolAnnotations(title="Search the biomedical literature", read_only_hint=True),
        description=f"Search {SOURCES_IN_WORDS} at once for QUERY and return the evidence found, each item with a "
        "stable id, its citation (title, authors, journal, date, DOI, PMID, URL) and its abstract or snippet. "
        "Items duplicating each other in meaning are merged. Fast (seconds); use it to see what the sources "
        "hold before, or instead of, a full research run.",
    )
    async def search_literature(
        query: Annotated[str, Field(description="Keywords or a short question, e.g. 'metformin alzheimer'")],
        ctx: Context,
        sources: SourcesArgument = None,
        max_results: Annotated[StrictInt, Field(ge=1, le=50, description="Results per source")] = 5,
    ) -> LiteratureSearch:
        """Search the sources at once (the description above, from the source table, is what a client reads)."""
        query = query.strip()
        if not query or len(query) > MAX_QUESTION_CHARS:
            raise ToolError(f"query: give between 1 and {MAX_QUESTION_CHARS} characters")
        chosen = manager.check_sources(sources)
        # A search calls every source as a run does: it counts against the same limit (else 40 a minute).
        client = _client(ctx)
        if (wait := await limit.retry_after(client)) is not None:
            raise ToolError(
                f"too many searches and runs from {client}: at most {limit.per_minute} a minute; try again in {wait} s"
            )
        searched = settings.with_values(sources=chosen)
        found = await run_search(query, searched, max_results=max_results, store=True, resources=manager.resources)
        if not found.result.answered_sources:
            raise ToolError(one_line("no source answered: " + "; ".join(found.result.errors)))
        return LiteratureSearch(
            query=query,
            synthetic_demo_data=found.demo,
            sources_searched=list(found.result.sources_searched),
            source_errors=list(found.result.errors),
            evidence=[EvidenceItem.of(item, synthetic=found.demo) for item in found.evidence],
        )


def _add_research_tool(server: MCPServer[Any], manager: RunManager, limit: RunRateLimit) -> None:
    """``research``: a run through the manager (queued with the page's runs), its progress reported."""

    @server.tool(annotations=ToolAnnotations(title="Research a biomedical question", read_only_hint=True))
    async def research(
        question: Annotated[str, Field(description="The research question, in plain words")],
        ctx: Context,
        max_iterations: Annotated[
            StrictInt | None,
            Field(ge=1, le=20, description="Plan-search-judge rounds at most (default: the server's)"),
        ] = None,
        sources: SourcesArgument = None,
        collection: Annotated[str | None, Field(description=_option("collection"), max_length=40)] = None,
        model: Annotated[str | None, Field(description=_option("model"), max_length=200)] = None,
        output_mode: Annotated[OutputMode | None, Field(description=_option("output_mode"))] = None,
        no_llm: Annotated[StrictBool, Field(description=_option("no_llm"))] = False,
        recall: Annotated[StrictBool | None, Field(description=_option("recall"))] = None,
        demo: Annotated[StrictBool, Field(description=_option("demo"))] = False,
        demo_sources: Annotated[StrictBool, Field(description=_option("demo_sources"))] = False,
        reader: Annotated[ReaderName | None, Field(description=_option("reader"))] = None,
    ) -> Annotated[CallToolResult, RunResult]:
        """Research QUESTION the way a systematic reviewer would: plan searches, search every source, judge
        whether the evidence suffices, repeat, then write a report in Markdown whose every claim cites a
        numbered reference checked against the evidence collected. Takes a minute or more; progress is
        reported as it goes. Returns the report and the run id (keep it: get_run returns the report later).
        If the call is dropped, the run still finishes on the server."""
        try:
            request = RunRequest(
                question=question,
                max_iterations=max_iterations,
                sources=sources,
                collection=collection,
                model=model,
                output_mode=output_mode,
                no_llm=no_llm,
                recall=recall,
                demo=demo,
                demo_sources=demo_sources,
                reader=reader,
            )
            manager.accept(request)
        except ValidationError as error:
            raise ToolError(_first_error(error)) from error
        client = _client(ctx)
        if await limit.retry_after(client) is not None:
            raise ToolError(limit.refusal(client) + "; try again in a minute")
        info = manager.create(request)
        step = 0
        async for event in manager.follow(info.run_id):
            step += 1
            await ctx.report_progress(step, None, progress_line(event))
        info = manager.get(info.run_id)
        if info.status != "finished":
            raise run_failure(info)
        return run_result(manager, info)


def _add_library_and_run_tools(server: MCPServer[Any], manager: RunManager, *, over_http: bool) -> None:
    """The library's tools (``mcp.library_tool``, on the server's resources) and ``get_run``."""
    register_library_tools(server, manager.resources, over_http=over_http)

    @server.tool(annotations=ToolAnnotations(title="Get a research run", read_only_hint=True))
    async def get_run(
        run_id: Annotated[
            str,
            Field(
                max_length=MAX_RUN_ID_CHARS,
                description="The id research returned, e.g. research-20250101-120000-abc123",
            ),
        ],
    ) -> Annotated[CallToolResult, RunResult]:
        """A research run's status and, once it finished, its cited report in Markdown."""
        return run_result(manager, manager.get(run_id.strip()))
