"""The page's result-reader choice: what the server offers, what a run started from the form records, and a
value the request refuses. The run request is the one the page's form posts (``submit`` in app.js)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.research_fakes import QUESTION
from helpers.web_fakes import APP_SCRIPT, Recording, ScriptedRuns, app_for, events_of, serving

PAGE = (Path(__file__).resolve().parents[2] / "src/deepcritical/web/static/index.html").read_text()


def form_body(**choices: Any) -> dict[str, Any]:
    """What the page's form posts: the question, the ticked sources, the rounds and the reader."""
    return {"question": QUESTION, "sources": ["pubmed", "web"], "max_iterations": 1, **choices}


async def test_the_server_offers_both_readers_and_its_own_setting(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        default = (await client.get("/api/info")).json()
    async with serving(app_for(tmp_path, ScriptedRuns(), reader="transformer")) as client:
        chosen = (await client.get("/api/info")).json()
    assert default["readers"] == chosen["readers"] == ["linear", "transformer"]
    assert (default["reader"], chosen["reader"]) == ("linear", "transformer")
    # The page fills its select from these, the server's own reader chosen, and posts the choice.
    assert '<select id="reader" name="reader"' in PAGE
    assert "info.readers" in APP_SCRIPT
    assert "reader.value = info.reader;" in APP_SCRIPT
    assert 'reader: $("reader").value' in APP_SCRIPT


async def test_a_run_started_from_the_form_with_the_transformer_records_it(tmp_path: Path) -> None:
    runs = Recording()
    async with serving(app_for(tmp_path, runs)) as client:
        created = await client.post("/api/runs", json=form_body(reader="transformer"))
        assert created.status_code == 202, created.text
        run_id = created.json()["run_id"]
        assert created.json()["reader"] == "transformer"
        await events_of(client, run_id)
        view = (await client.get(f"/api/runs/{run_id}")).json()
        listed = (await client.get("/api/runs")).json()
    assert view["reader"] == "transformer"  # what the run page shows with the run's settings
    assert [run["reader"] for run in listed] == ["transformer"]
    request = json.loads((tmp_path / "runs" / run_id / "request.json").read_text())
    assert request["reader"] == "transformer"  # a resumed run keeps it
    status = json.loads((tmp_path / "runs" / run_id / "status.json").read_text())
    assert status["reader"] == "transformer"
    assert [settings.reader for settings in runs.given] == ["transformer"]


async def test_a_run_that_names_no_reader_takes_the_servers(tmp_path: Path) -> None:
    runs = Recording()
    async with serving(app_for(tmp_path, runs, reader="transformer")) as client:
        created = await client.post("/api/runs", json=form_body())
        assert created.status_code == 202, created.text
        await events_of(client, created.json()["run_id"])
        linear = await client.post("/api/runs", json=form_body(reader="linear"))
        assert linear.status_code == 202, linear.text
        await events_of(client, linear.json()["run_id"])
    assert [settings.reader for settings in runs.given] == ["transformer", "linear"]
    assert (created.json()["reader"], linear.json()["reader"]) == ("transformer", "linear")


async def test_an_unknown_reader_is_refused_in_one_line_and_no_run_starts(tmp_path: Path) -> None:
    runs = Recording()
    async with serving(app_for(tmp_path, runs)) as client:
        response = await client.post("/api/runs", json=form_body(reader="bert"))
        assert response.status_code == 422
        assert response.json() == {"error": "reader: Input should be 'linear' or 'transformer'", "field": "reader"}
        assert (await client.get("/api/runs")).json() == []
    assert runs.given == []


def test_a_status_file_from_before_the_choice_reads_as_the_linear_reader() -> None:
    from deepcritical.run.store import RunInfo

    old = {
        "run_id": "research-20240101-000000-0abc00",
        "question": QUESTION,
        "status": "finished",
        "demo": True,
        "max_iterations": 1,
        "sources": ["pubmed"],
        "created_at": "2024-01-01T00:00:00+00:00",
    }
    assert RunInfo.model_validate(old).reader == "linear"


def test_the_page_offers_the_transformer_only_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reviewer's finding: the page offered "transformer" on an install without its weights, and the run it
    accepted then failed at its start."""
    from deepcritical.appraisal.readers import installed_readers
    from deepcritical.reading import transformer_classifier

    assert installed_readers()[0] == "linear"
    monkeypatch.setattr(transformer_classifier, "bundled_weights", lambda: None)
    assert installed_readers() == ["linear"]
