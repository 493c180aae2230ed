"""``deepcritical mcp`` answers ``initialize`` before its tools have loaded (``mcp.stdio``): the client hears
back in about a second; the first list or call waits for the tools. Its help names every tool it serves."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import TextContent

from deepcritical.config import load_settings
from deepcritical.mcp.about import TOOL_NAMES
from deepcritical.mcp.server import build_mcp_server
from deepcritical.mcp.stdio import DeferredMCPServer
from deepcritical.service.manager import RunManager
from helpers.web_fakes import ScriptedRuns, offline_client

PAGE = (Path(__file__).resolve().parents[2] / "src/deepcritical/web/static/index.html").read_text()


def full_server() -> MCPServer[object]:
    server: MCPServer[object] = MCPServer("full")

    @server.tool()
    async def echo(text: str) -> str:
        """Say ``text`` back."""
        return text

    return server


async def test_initialize_is_answered_before_the_tools_have_loaded_and_a_list_waits_for_them() -> None:
    deferred = DeferredMCPServer()
    async with Client(deferred) as client:  # connecting is the initialize handshake: the tools are not there
        assert client.server_info is not None
        assert client.server_info.name == "deepcritical"
        assert client.instructions is not None
        assert "search_literature" in client.instructions
        waiting = asyncio.Event()
        full = deferred._full

        async def watched() -> MCPServer[Any]:
            waiting.set()  # the list has reached the server and waits for its tools
            return await full()

        deferred._full = watched  # type: ignore[method-assign]
        listing = asyncio.create_task(client.list_tools())
        await waiting.wait()
        assert not listing.done()
        deferred.use(full_server())
        assert [tool.name for tool in (await listing).tools] == ["echo"]
        called = await client.call_tool("echo", {"text": "hello"})
    assert not called.is_error
    assert [block.text for block in called.content if isinstance(block, TextContent)] == ["hello"]


async def test_tools_that_could_not_load_say_why_in_every_call() -> None:
    deferred = DeferredMCPServer()
    async with Client(deferred) as client:
        deferred.refuse("DEEPCRITICAL_EMBEDDING_MODEL: no model at /nowhere")
        assert (await client.list_tools()).tools == []
        called = await client.call_tool("research", {"question": "Do statins prevent dementia?"})
    assert called.is_error
    text = "".join(block.text for block in called.content if isinstance(block, TextContent))
    assert text == "DEEPCRITICAL_EMBEDDING_MODEL: no model at /nowhere"


async def served_tools(home: Path) -> set[str]:
    settings = load_settings(demo_mode=True, home=home)
    manager = RunManager(settings, client_factory=offline_client, run_source=ScriptedRuns())
    async with manager, Client(build_mcp_server(manager, settings)) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def test_the_help_of_mcp_names_every_tool_the_server_serves(tmp_path: Path) -> None:
    served = asyncio.run(served_tools(tmp_path))
    assert served == set(TOOL_NAMES)
    shown = subprocess.run(
        [sys.executable, "-m", "deepcritical", "mcp", "--help"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert {name for name in TOOL_NAMES if re.search(rf"\b{name}\b", shown)} == served


def test_the_pages_question_boxes_take_as_long_a_question_as_the_server() -> None:
    from deepcritical.text import MAX_QUESTION_CHARS

    for box in ("question", "watch-question"):
        found = re.search(rf'id="{box}"[^>]*maxlength="(\d+)"', PAGE)
        assert found is not None, box
        assert int(found.group(1)) == MAX_QUESTION_CHARS


def test_what_mcp_needs_to_answer_initialize_loads_no_store_nor_model_runtime() -> None:
    """``initialize`` is answered once the protocol's modules and the settings have loaded: the store, the ONNX
    runtime and the model clients load behind it (``mcp.stdio``). Checked in a fresh interpreter;
    bench/refusal_timing.py times it."""
    heavy = ("chromadb", "onnxruntime", "torch", "sentence_transformers", "pydantic_ai", "numpy", "fastapi")
    script = (
        "import json, sys\n"
        "from deepcritical.cli.app import app\n"
        "from deepcritical.config import load_settings\n"
        "from deepcritical.mcp import stdio\n"
        "load_settings(demo_mode=True)\n"
        f"before = [name for name in {heavy!r} if name in sys.modules]\n"
        "from deepcritical.mcp import server\n"
        f"print(json.dumps([before, [name for name in {heavy!r} if name in sys.modules]]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=300)
    before, after = json.loads(result.stdout.strip().splitlines()[-1])
    assert before == []
    assert {"chromadb", "pydantic_ai"} <= set(after)  # the tools do: the check is not vacuous
