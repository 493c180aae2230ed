"""The MCP tools through the SDK's own client, in process, over the real run manager and scripted runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcritical.errors import ConfigError
from deepcritical.service.manager import RunManager
from helpers.web_fakes import connected, text_of

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


async def test_the_tools_are_listed_with_descriptions_for_the_calling_model(tmp_path: Path) -> None:
    async with connected(tmp_path) as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {
        "search_literature",
        "research",
        "get_run",
        "library_add",
        "library_documents",
        "library_search",
        "watch_add",
        "watch_list",
        "watch_changes",
    }
    assert all(tool.description and len(tool.description) > 60 for tool in tools.values())
    research = tools["research"].input_schema
    assert research["required"] == ["question"]
    assert research["properties"]["max_iterations"]["anyOf"][0]["maximum"] == 20
    assert tools["research"].output_schema is not None


async def test_research_reports_progress_and_returns_the_report_and_run_id(tmp_path: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with connected(tmp_path) as client:
        result = await client.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)
        assert result.structured_content is not None
        fetched = await client.call_tool("get_run", {"run_id": result.structured_content["run_id"]})
    assert not result.is_error
    structured = result.structured_content
    assert structured is not None
    assert structured["status"] == "finished"
    assert structured["report_markdown"].startswith(f"# {QUESTION}")
    assert structured["frame"]["intervention"] == "metformin"
    # The answer first: the question's frame, then the run and its report (this fake run has no verdict).
    opening = text_of(result).split("\n")
    assert opening[0].startswith("Question frame: Population: Alzheimer's disease · Intervention: metformin")
    assert structured["answer"] is None
    assert opening[1].startswith(f"Run {structured['run_id']} finished")
    assert [value for value, _ in progress] == list(range(1, len(progress) + 1))
    messages = [message or "" for _, message in progress]
    assert messages[1].startswith("iteration 1/2")
    assert messages[-1] == "run ended: finished"
    assert fetched.structured_content is not None
    assert fetched.structured_content["report_markdown"] == structured["report_markdown"]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("research", {"question": "  "}, "question: the question is empty"),
        ("research", {"question": QUESTION, "max_iterations": 3}, "max_iterations: must be between 1 and 2"),
        ("research", {"question": ""}, "question: the question is empty"),
        ("research", {"question": "the of and?"}, "question: the question has no searchable words"),
        ("get_run", {"run_id": "research-20240101-000000-abcdef"}, "no run has the id"),
        ("search_literature", {"query": ""}, "query: give between 1 and"),
        ("search_literature", {"query": "metformin", "sources": ["scholar"]}, "sources: unknown source 'scholar'"),
        # The SDK's argument check spans four lines with the caller's value; it is restated in one, without it.
        ("search_literature", {"query": "x", "max_results": "many"}, "search_literature: max_results: Input should be"),
        ("get_run", {"run_id": 12345}, "get_run: run_id: Input should be a valid string"),
        ("research", {"question": "q?", "max_iterations": 99}, "research: max_iterations: Input should be less"),
    ],
)
async def test_failures_are_tool_errors_in_one_line(
    tmp_path: Path, tool: str, arguments: dict[str, object], message: str
) -> None:
    async with connected(tmp_path) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = text_of(result)
    assert message in text
    assert "\n" not in text
    assert "input_value" not in text


async def test_a_synthetic_record_found_over_mcp_names_no_page(tmp_path: Path) -> None:
    """A new user's assistant searched the demo over MCP: each synthetic record came with a real PubMed address
    (`https://pubmed.ncbi.nlm.nih.gov/99000305/`), which opens another paper or none, flagged only by the result's
    `synthetic_demo_data`. The report, the exports and `search`'s table give such a record no link; nor does MCP."""
    async with connected(tmp_path) as client:
        result = await client.call_tool("search_literature", {"query": "statins sepsis mortality", "max_results": 3})
    assert not result.is_error, text_of(result)
    found = result.structured_content
    assert found is not None
    assert found["synthetic_demo_data"] is True
    assert found["evidence"]
    assert all(item["url"] is None for item in found["evidence"])
    assert any(item["pmid"] for item in found["evidence"])  # the record itself is whole


@pytest.mark.parametrize(
    ("raised", "said", "withheld"),
    [
        # A project error from anywhere below a tool is anticipated: its reason, in one line.
        (ConfigError("the store is locked\nby another process"), "the store is locked by another process", None),
        # Anything else is a crash: the client is told which tool failed, never the exception's own text.
        (RuntimeError("secret internal detail"), "Error executing tool get_run", "secret internal detail"),
    ],
)
async def test_the_server_says_a_project_error_from_any_tool_and_withholds_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception, said: str, withheld: str | None
) -> None:
    def failing(_manager: RunManager, _run_id: str) -> None:
        raise raised

    monkeypatch.setattr(RunManager, "get", failing)
    async with connected(tmp_path) as client:
        result = await client.call_tool("get_run", {"run_id": "research-20240101-000000-abcdef"})
    text = text_of(result)
    assert result.is_error
    assert said in text
    assert "\n" not in text
    assert withheld is None or withheld not in text
