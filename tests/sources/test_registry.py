"""The source registry and the settings tree: one list of sources, each built from its own settings group."""

from __future__ import annotations

from typing import get_args

import httpx2
import pytest
from pydantic import AnyHttpUrl, SecretStr

from deepcritical.config import Settings
from deepcritical.models import ALL_SOURCES, KNOWN_SOURCES, SOURCE_LABELS, SourceName
from deepcritical.sources.clinicaltrials import ClinicalTrialsTool
from deepcritical.sources.europepmc import EuropePmcTool
from deepcritical.sources.factory import DEADLINE_PER_TIMEOUT, build_sources
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.registry import SOURCES, source_labels
from deepcritical.sources.searxng import SearxngTool
from deepcritical.sources.web import WebTool
from deepcritical.sources.you import ResearchEngine


def settings(**values: object) -> Settings:
    # Built from keyword arguments (by variable name) only: no .env or environment of the developer's.
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def test_the_registry_lists_every_source_name_once_in_the_default_order() -> None:
    assert [spec.name for spec in SOURCES] == list(ALL_SOURCES)
    # ``library`` (the user's own collections) is asked for by name and built beside the registry, from the
    # collection the run names: every known source has its name and its label once.
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
    }
    assert {name: type(tool) for name, tool in tools.items()} == kinds
    assert {name: tool.timeout for name, tool in tools.items()} == {
        "searxng": 3,
        "you": 4,
        "pubmed": 5,
        "web": 6,
        "clinicaltrials": 7,
        "europepmc": 8,
    }
    assert tools["you"] is sources.research_engine  # the Brain's lookups and the source share one engine
    assert tools["clinicaltrials"].host == "ct.mirror.example"
    assert sources.handler.unavailable == {}
    assert sources.handler._timeouts["clinicaltrials"] == 7 * DEADLINE_PER_TIMEOUT


def test_a_source_its_configuration_cannot_run_is_left_out_with_the_reason() -> None:
    sources = build_sources(settings(DEEPCRITICAL_SOURCES="searxng,you,europepmc"), httpx2.AsyncClient())
    assert sources.handler.source_names == ["europepmc"]
    assert sources.handler.unavailable == {"searxng": "SEARXNG_BASE_URL is not set", "you": "YOU_API_KEY is not set"}
    assert sources.research_engine is None


def test_the_settings_tree_follows_the_flat_fields() -> None:
    flat = settings(
        DEEPCRITICAL_SOURCES="pubmed,web",
        NCBI_API_KEY="n" * 20,
        DEEPCRITICAL_MAX_ITERATIONS="4",
        DEEPCRITICAL_DEDUP_THRESHOLD="0.8",
        DEEPCRITICAL_RUNS_PER_MINUTE="7",
    )
    assert flat.search.enabled == ("pubmed", "web")
    assert flat.search.pubmed.api_key == SecretStr("n" * 20)
    assert flat.loop.max_iterations == 4
    assert flat.store.dedup_threshold == 0.8
    assert flat.serve.runs_per_minute == 7
    # A preset (a copy with new flat values) is reflected in the tree: the tree is a view, not a second copy.
    moved = flat.model_copy(update={"searxng_base_url": AnyHttpUrl("https://other.example"), "max_iterations": 2})
    assert moved.search.searxng.base_url == "https://other.example/"
    assert moved.loop.max_iterations == 2
    with pytest.raises(ValueError, match="frozen"):
        moved.loop.max_iterations = 9  # type: ignore[misc]
