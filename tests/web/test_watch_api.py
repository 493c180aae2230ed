"""The watches over HTTP: add, list, read, feed, remove; the API's error shape; its token and origin
rules apply to the watch routes too."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from deepcritical.service.watches import WatchRun
from deepcritical.service.watches_sqlite import WatchStore
from helpers.web_fakes import ScriptedRuns, app_for, serving

QUESTION = "Does vitamin D supplementation prevent or treat depression?"
TOKEN = "a-long-enough-api-token-1234"


async def test_a_watch_is_added_listed_read_fed_and_removed(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        added = await client.post(
            "/api/watches", json={"question": QUESTION, "every": "2w", "webhook": "https://h.example/x"}
        )
        assert added.status_code == 201, added.text
        view = added.json()
        assert (view["question"], view["every"], view["webhook"]) == (QUESTION, "14d", True)  # shown in days
        assert "h.example" not in added.text  # the webhook's URL (a token may be in it) is never shown
        at = datetime(2026, 7, 1, 12, tzinfo=UTC)
        folder = tmp_path / "watches" / view["id"] / "runs" / "watch-20260701-120000-abcdef"
        run = WatchRun(
            run_at=at, folder=str(folder), verdict="no", confidence=0.7, counted=5, changed=True,
            summary=["new: <b>a trial</b>", "VERDICT CHANGED: yes (0.60) -> no (0.70)"],
        )  # fmt: skip
        WatchStore.at_home(tmp_path).record_run(view["id"], run, next_due=at)
        listed = (await client.get("/api/watches")).json()
        assert [item["id"] for item in listed] == [view["id"]]
        assert listed[0]["last_run"]["verdict"] == "no"
        assert listed[0]["last_run"]["verdict_text"] == "no (confidence 0.70)"  # as the report words it
        # Under the server's home, not its own path (which names its user and layout)
        assert listed[0]["last_run"]["folder"] == f"watches/{view['id']}/runs/watch-20260701-120000-abcdef"
        assert str(tmp_path) not in (await client.get(f"/api/watches/{view['id']}")).text
        one = (await client.get(f"/api/watches/{view['id']}")).json()
        assert [entry["summary"] for entry in one["history"]] == [run.summary]
        feed = await client.get(view["links"]["feed"])
        assert feed.status_code == 200
        assert feed.headers["content-type"].startswith("application/atom+xml")
        entries = ET.fromstring(feed.content).findall("{http://www.w3.org/2005/Atom}entry")
        assert len(entries) == 1
        assert (await client.delete(f"/api/watches/{view['id']}")).status_code == 204
        assert (await client.get("/api/watches")).json() == []
        gone = await client.get(f"/api/watches/{view['id']}/feed.atom")
        assert gone.status_code == 404
        assert gone.json()["field"] == "id"
        assert "deepcritical watch list" not in gone.json()["error"]  # a command to type is the command line's


async def test_bad_watch_requests_get_the_api_error_shape(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        for body, field in [
            ({"question": "   "}, "question"),
            ({"question": QUESTION, "every": "5m"}, "every"),
            ({"question": QUESTION, "webhook": "file:///etc/passwd"}, "webhook"),
            ({"question": QUESTION, "webhook": "http://169.254.169.254/latest/meta-data/"}, "webhook"),
            ({"question": QUESTION, "webhook": "http://[::ffff:127.0.0.1]:6379/"}, "webhook"),
            ({"question": QUESTION, "sources": ["nowhere"]}, "sources"),
            ({"question": QUESTION, "every": "99999999999999d"}, "every"),
            ({"question": QUESTION, "every": "999999999d"}, "every"),  # in range, but its due time is not
            ({"question": QUESTION, "sources": ["pubmed"] * 9}, "sources"),
            ({"question": QUESTION, "sources": ["pubmed", "europepmc"] * 5}, "sources"),
        ]:
            response = await client.post("/api/watches", json=body)
            assert response.status_code == 422, body
            assert set(response.json()) == {"error", "field"}
            # A developer's field, not the command line's flag: "every '5m': ...", never "--every '5m': ..."
            assert not response.json()["error"].startswith("--"), response.json()
            assert response.json()["field"] == field
        unknown = await client.delete("/api/watches/w-00000000")
        assert unknown.status_code == 404
        assert "w-00000000" in unknown.json()["error"]


async def test_the_watch_routes_need_the_token_and_refuse_other_origins(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns(), api_token=TOKEN)) as client:
        assert (await client.get("/api/watches")).status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert (await client.get("/api/watches", headers=auth)).status_code == 200
        cross = await client.post(
            "/api/watches", json={"question": QUESTION}, headers={**auth, "Origin": "https://evil.example"}
        )
        assert cross.status_code == 403
        assert (await client.get("/api/watches", headers=auth)).json() == []


async def test_the_page_has_the_watched_questions_view_without_inline_script(tmp_path: Path) -> None:
    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        page = (await client.get("/")).text
        script = await client.get("/static/watches.js")
    assert 'id="watches"' in page
    assert '<script src="/static/watches.js" defer></script>' in page
    assert script.status_code == 200
    assert "innerHTML" not in script.text  # a watch's question and a paper's title are set as text
    assert "/api/watches" in script.text


async def test_a_damaged_watch_is_left_out_of_the_list_and_named(tmp_path: Path) -> None:
    import sqlite3

    async with serving(app_for(tmp_path, ScriptedRuns())) as client:
        kept = (await client.post("/api/watches", json={"question": QUESTION})).json()
        broken = (await client.post("/api/watches", json={"question": "Does aspirin reduce stroke?"})).json()
        with sqlite3.connect(tmp_path / "watches.sqlite") as connection:
            connection.execute("UPDATE watches SET created = 'yesterday' WHERE id = ?", (broken["id"],))
        listed = await client.get("/api/watches")
        assert listed.status_code == 200
        assert [item["id"] for item in listed.json()] == [kept["id"]]
        assert listed.headers["X-DeepCritical-Unreadable"] == broken["id"]
        one = await client.get(f"/api/watches/{broken['id']}")
        assert one.status_code == 422
        assert set(one.json()) == {"error", "field"}
        assert "cannot be read" in one.json()["error"]
        feed = await client.get(f"/api/watches/{broken['id']}/feed.atom")
        assert feed.status_code == 422
