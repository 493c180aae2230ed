"""Property tests: whatever JSON a SearXNG instance (or something pretending to be one) sends, the parser
yields results that become valid Evidence, or a SearchError, never another exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepcritical.errors import SearchError
from deepcritical.sources.searxng import SearxngTool, parse_response, results_to_evidence

FIELDS = ["url", "title", "content", "score", "publishedDate", "parsed_url", "position", "source", "engine"]

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=25,
)
urls = st.sampled_from(["https://a.org/x", "http://B.org", "http://[::1", "ftp://c.org", "", " https://d.org/ "])
urls = urls | st.text(max_size=40) | st.text(max_size=20).map(lambda tail: f"https://e.org/{tail}")
# Mostly SearXNG-shaped results, with every field possibly the wrong type, so the deep paths get exercised.
result_items = st.fixed_dictionaries(
    {"url": urls, "content": st.text(max_size=600) | json_values},
    optional={field: json_values | st.text(max_size=600) for field in FIELDS[1:] if field != "content"},
)
extras = {
    "number_of_results": json_values,
    "unresponsive_engines": json_values | st.lists(st.lists(json_scalars, max_size=3), max_size=3),
}
searxng_like = st.fixed_dictionaries({"results": st.lists(result_items | json_values, max_size=8)}, optional=extras)
odd_shapes = st.fixed_dictionaries({}, optional={"results": json_values, **extras})
bodies = st.one_of(searxng_like, searxng_like, odd_shapes, json_values)


def check(data: Any, max_results: int) -> None:
    try:
        parsed = parse_response("q", data, max_results=max_results)
    except SearchError as error:
        failure = str(error)
    else:
        failure = ""
    if failure:
        assert failure.startswith("searxng: ")
        return
    assert parsed.total >= 0
    if max_results > 0:
        assert len(parsed.results) <= max_results
    assert parsed.results or parsed.error
    for item in results_to_evidence(parsed):
        assert 0.0 <= item.relevance <= 1.0
        assert item.content
        assert item.id  # identity must be computable for every item the handler will merge


@pytest.mark.slow
@given(data=bodies, max_results=st.integers(min_value=-2, max_value=10))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_parser_yields_results_or_search_error(data: Any, max_results: int) -> None:
    check(data, max_results)


@given(body=st.binary(max_size=200) | bodies.map(lambda data: json.dumps(data).encode()))
@settings(max_examples=100, deadline=None)
def test_tool_over_the_wire_yields_evidence_or_search_error(body: bytes) -> None:
    async def run() -> None:
        transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=body))
        async with httpx2.AsyncClient(transport=transport) as client:
            tool = SearxngTool(client, base_url="https://searx.example.org")
            try:
                evidence = await tool.search("q", max_results=5)
            except SearchError:
                return
            assert len(evidence) <= 5

    asyncio.run(run())
