"""The source table and the settings tree: one list of sources, each built from its own settings group."""

from __future__ import annotations

from typing import get_args

import httpx2
import pytest
from pydantic import SecretStr

from deepcritical.config import Settings, load_settings
from deepcritical.errors import ConfigError
from deepcritical.models import ALL_SOURCES, KNOWN_SOURCES, SOURCE_LABELS, SourceName
from deepcritical.source_table import API_SOURCES, SOURCES, SourceEntry, source_labels, sources_help
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.factory import DEADLINE_PER_TIMEOUT, build_sources
from deepcritical.sources.openalex import OpenAlexTool
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine


def settings(**values: object) -> Settings:
    # Built from keyword arguments (by variable name) only: no .env or environment of the developer's.
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_the_table_lists_every_source_name_once_in_the_default_order() -> None:
    assert [entry.name for entry in SOURCES] == list(KNOWN_SOURCES)
    assert [entry.name for entry in SOURCES if entry.default] == list(ALL_SOURCES)
    assert {"openalex", "library"}.isdisjoint(ALL_SOURCES)  # asked for by name
    # Every known source has its name (the Literal is written out) and its label once.
    assert list(KNOWN_SOURCES) == list(get_args(SourceName)) == list(SOURCE_LABELS)
    labels = source_labels()
    assert len(set(labels.values())) == len(labels)
    assert labels["clinicaltrials"] == "ClinicalTrials.gov"


def test_every_enabled_source_is_built_from_its_own_settings_group() -> None:
    configured = settings(
        SEARXNG_BASE_URL="https://searx.example.org",
        SEARXNG_TIMEOUT="3",
        YOU_API_KEY="k" * 20,
        YOU_TIMEOUT="4",
        PUBMED_TIMEOUT="5",
        WEB_TIMEOUT="6",
        CLINICALTRIALS_TIMEOUT="7",
        CLINICALTRIALS_BASE_URL="https://ct.mirror.example/api/v2/",
        EUROPEPMC_TIMEOUT="8",
        OPENALEX_TIMEOUT="9",
        OPENALEX_BASE_URL="https://openalex.mirror.example",
        # Named, not ALL_SOURCES: a source added to the table later leaves this test as it is.
        DEEPCRITICAL_SOURCES="pubmed,web,searxng,you,clinicaltrials,europepmc,openalex",
    )
    sources = build_sources(configured, httpx2.AsyncClient())
    tools = {tool.name: tool for tool in sources.handler.tools}
    kinds = {
        "pubmed": PubMedTool,
        "web": WebTool,
        "searxng": SearxngTool,
        "you": ResearchEngine,
        "clinicaltrials": ClinicalTrialsTool,
        "europepmc": EuropePmcTool,
        "openalex": OpenAlexTool,
    }
    assert {name: type(tool) for name, tool in tools.items()} == kinds
    assert {name: tool.timeout for name, tool in tools.items()} == {
        "searxng": 3,
        "you": 4,
        "pubmed": 5,
        "web": 6,
        "clinicaltrials": 7,
        "europepmc": 8,
        "openalex": 9,
    }
    assert tools["you"] is sources.research_engine  # the Brain's lookups and the source share one engine
    assert tools["clinicaltrials"].host == "ct.mirror.example"
    assert tools["openalex"].host == "openalex.mirror.example"  # OPENALEX_*: declared from the table alone
    assert sources.handler.unavailable == {}
    assert sources.handler._timeouts["clinicaltrials"] == 7 * DEADLINE_PER_TIMEOUT


def test_a_source_its_configuration_cannot_run_is_left_out_with_the_reason() -> None:
    sources = build_sources(settings(DEEPCRITICAL_SOURCES="searxng,you,europepmc"), httpx2.AsyncClient())
    assert sources.handler.source_names == ["europepmc"]
    assert sources.handler.unavailable == {"searxng": "SEARXNG_BASE_URL is not set", "you": "YOU_API_KEY is not set"}
    assert sources.research_engine is None


def test_the_settings_tree_follows_the_flat_fields() -> None:
    flat = settings(DEEPCRITICAL_SOURCES="pubmed,web", NCBI_API_KEY="n" * 20, EUROPEPMC_TIMEOUT="3")
    assert flat.search.enabled == ("pubmed", "web")
    assert flat.search.pubmed.api_key == SecretStr("n" * 20)
    assert flat.search.timeout("europepmc") == 3
    # A preset (a copy with new flat values) is reflected in the tree: the tree is a view, not a second copy.
    moved = flat.with_values(
        searxng_base_url="https://other.example",
        endpoints={"openalex": {"base_url": "https://oa.example/", "timeout": 4}},
    )
    assert moved.search.searxng.base_url == "https://other.example/"
    assert str(moved.search.apis["openalex"].base_url) == "https://oa.example/"
    assert moved.search.timeout("europepmc") == 3  # the other endpoints kept
    with pytest.raises(ValueError, match="frozen"):
        moved.search.pubmed.timeout = 9  # type: ignore[misc]


@pytest.mark.parametrize("entry", API_SOURCES, ids=lambda entry: entry.name)
def test_each_public_api_of_the_table_has_its_variables_and_its_demo_address(
    entry: SourceEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert {"clinicaltrials", "europepmc", "openalex"} <= {api.name for api in API_SOURCES}
    timeout = f"{entry.variable}_TIMEOUT"
    monkeypatch.setenv(timeout, "-1")
    with pytest.raises(ConfigError, match=f"{timeout}: Input should be greater than 0"):
        load_settings()
    monkeypatch.delenv(timeout)
    mirrored = settings(**{f"{entry.variable}_BASE_URL": "https://mirror.example"})
    # The demo presets send every public API back to the public address, where its stand-in answers.
    assert str(mirrored.demo_sources_preset().search.apis[entry.name].base_url).rstrip("/") == entry.base_url


def test_the_help_names_every_source_and_what_the_by_name_ones_hold() -> None:
    text = sources_help()
    assert all(name in text for name in KNOWN_SOURCES)
    assert "openalex (scholarly works" in text
