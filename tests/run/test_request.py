"""One run request for every front end: its options are validated once into a plan (settings through
pydantic, presets applied, a run id and a folder); the API, MCP and the command line offer every option and
hand it to the run as given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic import ValidationError

from deepcritical.cli.app import app
from deepcritical.config import Settings, load_settings
from deepcritical.errors import ConfigError
from deepcritical.mcp.server import build_mcp_server
from deepcritical.run.request import RunRequest, RunRequestError, runs_folder
from deepcritical.service.manager import RunManager
from deepcritical.source_table import DEMO_SEARXNG_URL
from deepcritical.web.app import create_app
from helpers.web_fakes import Recording, offline_client, serving

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
OPTIONS = set(RunRequest.model_fields) - {"question"}
# Every option with a value other than its default, as a client sends it.
EVERY_OPTION: dict[str, Any] = {
    "sources": ["pubmed"],
    "collection": "papers",
    "max_iterations": 1,
    "model": "openai:local-model",
    "output_mode": "prompted",
    "no_llm": True,
    "recall": False,
    "demo": False,
    "demo_sources": True,
    "reader": "transformer",
}


def base(tmp_path: Path, **values: Any) -> Settings:
    defaults = {"DEEPCRITICAL_HOME": str(tmp_path / "home"), "DEEPCRITICAL_MAX_ITERATIONS": 2}
    return Settings(_env_file=None, **(defaults | values))  # type: ignore[arg-type]


def assert_every_option_reached(settings: Settings) -> None:
    assert settings.sources == ["pubmed"]
    assert settings.library_collection == "papers"
    assert settings.max_iterations == 1
    assert settings.model == "openai:local-model"
    assert settings.output_mode == "prompted"
    assert settings.no_llm is True
    assert settings.recall is False
    assert settings.demo_sources is True
    assert settings.reader == "transformer"
    assert str(settings.searxng_base_url).startswith(DEMO_SEARXNG_URL)  # the preset was applied


def test_every_option_is_in_the_settings_of_the_plan(tmp_path: Path) -> None:
    assert set(EVERY_OPTION) == OPTIONS  # this test names every option
    plan = RunRequest(question=QUESTION, **EVERY_OPTION).plan(base(tmp_path))
    assert_every_option_reached(plan.settings)
    assert plan.folder == runs_folder(plan.settings) / plan.run_id == tmp_path / "home" / "runs" / plan.run_id


def test_options_left_out_take_the_settings_values(tmp_path: Path) -> None:
    settings = base(tmp_path, DEEPCRITICAL_MODEL="anthropic:claude", DEEPCRITICAL_RECALL=False)
    planned = RunRequest(question=QUESTION).plan(settings, run_id="research-20260101-000000-abcdef").settings
    assert (planned.model, planned.recall, planned.max_iterations) == ("anthropic:claude", False, 2)


def test_demo_is_the_demo_preset_not_a_flag_alone(tmp_path: Path) -> None:
    settings = RunRequest(question=QUESTION, demo=True, recall=True).settings(base(tmp_path))
    assert settings.demo_mode
    assert settings.recall is False  # the preset wins: a demo question always gives the same report
    assert str(settings.searxng_base_url).startswith(DEMO_SEARXNG_URL)


@pytest.mark.parametrize(
    ("variable", "demo", "demo_sources"), [("DEMO_MODE", True, False), ("DEEPCRITICAL_DEMO_SOURCES", False, True)]
)
def test_a_demo_the_server_or_environment_set_is_recorded_with_the_request(
    tmp_path: Path, variable: str, demo: bool, demo_sources: bool
) -> None:
    # A demo server's run, resumed later from its folder without that server, must stay a demo.
    plan = RunRequest(question=QUESTION).plan(base(tmp_path, **{variable: True}).with_presets())
    assert (plan.request.demo, plan.request.demo_sources) == (demo, demo_sources)
    resumed = RunRequest.model_validate_json(plan.request.model_dump_json()).settings(base(tmp_path))
    assert (resumed.demo_mode, resumed.demo_sources) == (demo, True)
    assert RunRequest(question=QUESTION).plan(base(tmp_path)).request.demo is False


def test_settings_are_validated_not_copied(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DEEPCRITICAL_MAX_ITERATIONS"):
        RunRequest(question=QUESTION, max_iterations=99).settings(base(tmp_path))
    with pytest.raises(ConfigError, match="DEEPCRITICAL_SOURCES"):
        RunRequest(question=QUESTION, sources=["scholar"]).settings(base(tmp_path))


def test_a_request_is_strictly_typed() -> None:
    for bad in ({"no_llm": "yes"}, {"max_iterations": "2"}, {"output_mode": "loud"}, {"collection": "a b"}):
        with pytest.raises(ValidationError):
            RunRequest.model_validate({"question": QUESTION, **bad})
    with pytest.raises(ValidationError):
        RunRequest.model_validate({"question": QUESTION, "colour": "blue"})


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"question": "   "}, "question"),
        ({"question": QUESTION, "max_iterations": 3}, "max_iterations"),
        ({"question": QUESTION, "sources": ["you"]}, "sources"),
        ({"question": QUESTION, "sources": []}, "sources"),
    ],
)
def test_a_server_takes_a_request_only_within_its_limits(tmp_path: Path, values: dict[str, Any], field: str) -> None:
    server = base(tmp_path, DEEPCRITICAL_SOURCES="pubmed,web")
    with pytest.raises(RunRequestError) as refused:
        RunRequest.model_validate(values).within(server)
    assert refused.value.field == field


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("?????", "the question has no searchable words:"),
        ("the of and?", "the question has no searchable words:"),
        ("Does it work?", "the question has no searchable words (only 'work'):"),
        ("2024?", "the question has no searchable words:"),
        ("二甲双胍能降低死亡率吗？", "the question's words could not be read as search terms: only English"),
        # Latin letters, and words a search would take (Metformin, Alzheimer): its function words tell.
        ("Wie wirkt Metformin bei Alzheimer?", "the question reads as a language other than English ('wie', "),
        ("La metformina reduce la mortalidad en la sepsis?", "the question reads as a language other than English"),
        ("Est-ce que la metformine protège contre la maladie d'Alzheimer ?", "the question reads as a language"),
    ],
)
def test_a_question_that_names_nothing_to_search_for_is_refused(tmp_path: Path, question: str, message: str) -> None:
    with pytest.raises(RunRequestError) as refused:
        RunRequest(question=question).within(base(tmp_path))
    assert refused.value.field == "question"
    assert refused.value.message.startswith(message)
    assert "\n" not in refused.value.message


@pytest.mark.parametrize(
    "question", ["Does aspirin work?", "Do statins help?", "Is it safe?", "HbA1c?", "Does vitamin D prevent falls?"]
)
def test_a_short_question_that_names_something_is_taken(tmp_path: Path, question: str) -> None:
    assert RunRequest(question=question).within(base(tmp_path)).question == question


def test_within_spells_out_what_the_run_will_use(tmp_path: Path) -> None:
    accepted = RunRequest(question=f"  {QUESTION}\n").within(base(tmp_path, DEEPCRITICAL_SOURCES="pubmed,web"))
    assert (accepted.question, accepted.max_iterations, accepted.sources) == (QUESTION, 2, ["pubmed", "web"])
    assert accepted.asking("Another?").question == "Another?"
    assert accepted.asking("Another?").sources == ["pubmed", "web"]


async def test_the_api_takes_every_option_and_the_run_gets_it(tmp_path: Path) -> None:
    script = Recording()
    app = create_app(base(tmp_path), client_factory=offline_client, run_source=script)
    async with serving(app) as client:
        response = await client.post("/api/runs", json={"question": QUESTION, **EVERY_OPTION})
        assert response.status_code == 202, response.text
        run_id = response.json()["run_id"]
        assert (await client.get(f"/api/runs/{run_id}/events")).status_code == 200  # to its end
        bad = await client.post("/api/runs", json={"question": QUESTION, "no_llm": 1})
        assert bad.status_code == 422
        assert bad.json()["field"] == "no_llm"
    (settings,) = script.given
    assert_every_option_reached(settings)


async def test_mcp_research_takes_every_option_and_the_run_gets_it(tmp_path: Path) -> None:
    settings = base(tmp_path)
    script = Recording()
    manager = RunManager(settings, client_factory=offline_client, run_source=script)
    async with manager, Client(build_mcp_server(manager, settings)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools["research"].input_schema["properties"]) >= OPTIONS
        result = await client.call_tool("research", {"question": QUESTION, **EVERY_OPTION})
        assert not result.is_error
    (given,) = script.given
    assert_every_option_reached(given)


def test_research_and_batch_offer_every_option() -> None:
    import typer.main

    command = typer.main.get_command(app)
    flags = {
        "sources": "--sources",
        "collection": "--collection",
        "max_iterations": "--max-iterations",
        "model": "--model",
        "output_mode": "--output-mode",
        "no_llm": "--no-llm",
        "recall": "--no-recall",
        "demo": "--demo",
        "demo_sources": "--demo-sources",
        "reader": "--reader",
    }
    assert set(flags) == OPTIONS
    for name in ("research", "batch"):
        offered = {opt for param in command.commands[name].params for opt in param.opts}  # type: ignore[attr-defined]
        assert set(flags.values()) <= offered, name


def test_load_settings_and_a_request_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line reads the environment with the request's options; a server applies them to its own
    settings: the same options give the same settings."""
    monkeypatch.setenv("DEEPCRITICAL_HOME", str(tmp_path / "home"))
    request = RunRequest(question=QUESTION, **EVERY_OPTION)
    from_flags = load_settings(**request.overrides())
    applied = request.settings(load_settings())
    assert from_flags.model_dump() == applied.model_dump()


async def test_a_model_asked_of_a_demo_run_is_refused_over_the_api_and_mcp_not_dropped(tmp_path: Path) -> None:
    """A new user's `POST /api/runs {"question": ..., "model": "openai:gpt-4o"}` to `serve --demo` was accepted (202)
    and run with the demo's stand-in models; its run.json then named "openai:gpt-4o" in its settings beside the
    demo model that wrote the report. The command line says so in a note; the API and MCP now refuse it, in one
    line naming the field."""
    demo_server = base(tmp_path, DEMO_MODE=True).with_presets()
    app = create_app(demo_server, client_factory=offline_client, run_source=Recording())
    async with serving(app) as client:
        refused = await client.post("/api/runs", json={"question": QUESTION, "model": "openai:gpt-4o"})
        assert refused.status_code == 422
        assert refused.json() == {
            "error": "model: a demo run uses its deterministic stand-in models, so 'openai:gpt-4o' would not be "
            "used: leave model out",
            "field": "model",
        }
        assert (await client.post("/api/runs", json={"question": QUESTION})).status_code == 202
    with pytest.raises(RunRequestError, match="or ask for demo_sources") as asked:
        RunRequest(question=QUESTION, demo=True, model="openai:gpt-4o").within(base(tmp_path))
    assert asked.value.field == "model"
    manager = RunManager(demo_server, client_factory=offline_client, run_source=Recording())
    async with manager, Client(build_mcp_server(manager, demo_server)) as mcp:
        result = await mcp.call_tool("research", {"question": QUESTION, "model": "openai:gpt-4o"})
        assert result.is_error
        assert "model: a demo run uses its deterministic stand-in models" in str(result.content[0])
