"""The watch replay on the demo: a run at T0 (the baseline), a run at T1 after a new trial entered PubMed
and a held trial was retracted, and a run at T2 with nothing new. ``changes.json`` lists exactly the new
and the retracted study; a webhook receiver on loopback gets one signed alert, for T1 alone."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from deepcritical.config import Settings, load_settings
from deepcritical.demo.clock import ClockedTransport
from deepcritical.demo.transport import demo_transport
from deepcritical.events import IterationStarted
from deepcritical.report.document import REPORT_DOCUMENT_FILE, ReportDocument
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.run.events import ProgressEvent
from deepcritical.service.watch_alerts import FEED_NAME, SIGNATURE_HEADER
from deepcritical.service.watch_run import read_outcome, run_watch_once, watch_clock
from deepcritical.service.watches import Watch, WatchOptions
from deepcritical.service.watches_sqlite import WatchStore
from deepcritical.sources.factory import make_http_client
from deepcritical.web.report_html import folder_report_html

pytestmark = pytest.mark.model
QUESTION = "Does vitamin D supplementation prevent or treat depression?"
SECRET = "watch-test-secret-0123456789"


class Receiver:
    """A webhook receiver on a free loopback port: every POST's headers and body."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    hook.thread.start()
    yield hook
    hook.server.shutdown()
    hook.server.server_close()


async def test_a_demo_watch_reports_the_new_trial_and_the_retraction_and_alerts_once(
    tmp_path: Path, receiver: Receiver
) -> None:
    # The receiver is on loopback: an operator's opt-in lets a watch alert a receiver on their own network.
    base = load_settings(demo_mode=True, home=tmp_path / "home", webhook_secret=SECRET, webhook_allow_private=True)
    store = WatchStore.at_home(base.home)
    at = {name: base.with_values(demo_today=day) for name, day in (("T0", date(2026, 3, 1)), ("T1", date(2026, 7, 1)))}
    at["T2"] = base.with_values(demo_today=date(2026, 7, 9))
    watch = store.add(
        QUESTION,
        every="7d",
        options=WatchOptions(demo=True),
        webhook=receiver.url,
        now=watch_clock(at["T0"]),
        allow_private_webhook=True,
    )

    first = await run_watch_once(store.get(watch.id), at["T0"], store)
    assert first.changes.baseline
    assert not first.alerted
    baseline_report = (first.folder / "report.md").read_text(encoding="utf-8")
    assert "What changed" not in baseline_report  # nothing to compare with: it says it is the baseline
    assert baseline_report.index("## Watch baseline") < baseline_report.index("## Verdict")
    assert receiver.received == []

    second = await run_watch_once(store.get(watch.id), at["T1"], store)
    written = json.loads((second.folder / "changes.json").read_text(encoding="utf-8"))
    assert written["since"] == "2026-03-01"
    assert [study["id"] for study in written["new_studies"]] == ["pmid:99000508"]
    assert written["new_studies"][0]["design"] == "randomized_controlled_trial"
    assert written["new_studies"][0]["level"] == 2
    assert [study["id"] for study in written["newly_retracted"]] == ["pmid:99000505"]
    assert written["newly_under_concern"] == []
    before, after = written["verdict_before"], written["verdict_after"]
    assert written["verdict_changed"] == (before["label"] != after["label"])
    assert written["sources_unavailable"] == {}
    report = (second.folder / "report.md").read_text(encoding="utf-8")
    assert report.index("DEMO MODE: SYNTHETIC SOURCES") < report.index("## What changed since 2026-03-01")
    assert report.index("## What changed since 2026-03-01") < report.index("## Verdict")
    assert "reads retracted" not in report  # a retracted study is said to be retracted, not read as such
    # The page shows the same section in the same place: the report's document has it (report.md is its Markdown).
    page = folder_report_html(second.folder)
    assert page.index("DEMO MODE: SYNTHETIC SOURCES") < page.index("<h2>What changed since 2026-03-01</h2>")
    assert page.index("<h2>What changed since 2026-03-01</h2>") < page.index("<h2>Verdict</h2>")
    document = ReportDocument.model_validate_json((second.folder / REPORT_DOCUMENT_FILE).read_bytes())
    assert to_markdown(document) == report
    assert second.webhook_delivered is True
    assert SECRET not in (second.folder / "run.json").read_text(encoding="utf-8")  # recorded as "set" only

    third = await run_watch_once(store.get(watch.id), at["T2"], store)
    assert not third.changes.changed
    assert not third.alerted

    assert len(receiver.received) == 1  # one alert: the run in which something changed
    headers, body = receiver.received[0]
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert headers[SIGNATURE_HEADER] == f"sha256={expected}"
    alert = json.loads(body)
    assert alert["watch_id"] == watch.id
    assert alert["folder"] == f"watches/{watch.id}/runs/{second.folder.name}"  # under the home, not the server's path
    assert str(tmp_path) not in body.decode("utf-8")
    assert [study["id"] for study in alert["changes"]["new_studies"]] == ["pmid:99000508"]
    feed = (store.folder(watch.id) / FEED_NAME).read_text(encoding="utf-8")
    assert feed.count("<entry>") == 1
    assert "99000508" not in feed
    history = store.history(watch.id)
    assert [run.changed for run in history] == [False, True, False]
    assert store.get(watch.id).next_due == watch_clock(at["T2"]) + watch.interval


async def baseline(tmp_path: Path, **overrides: str) -> tuple[Settings, WatchStore, Watch]:
    """Demo settings, the watch store, and a vitamin D watch whose baseline ran at the demo clock's 2026-03-01."""
    base = load_settings(demo_mode=True, home=tmp_path / "home", **overrides)
    store = WatchStore.at_home(base.home)
    early = base.with_values(demo_today=date(2026, 3, 1))
    watch = store.add(QUESTION, every="7d", options=WatchOptions(demo=True), now=watch_clock(early))
    await run_watch_once(store.get(watch.id), early, store)
    return base, store, watch


class Unreachable(httpx2.AsyncBaseTransport):
    """The stand-ins, with the hosts in ``down`` answering 503 every time."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, down: set[str]) -> None:
        self.inner, self.down = inner, down

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host in self.down:
            return httpx2.Response(503, text="down for maintenance")
        return await self.inner.handle_async_request(request)


async def test_a_source_that_does_not_answer_is_never_a_change_in_the_evidence(tmp_path: Path) -> None:
    base, store, watch = await baseline(tmp_path)
    later = base.with_values(demo_today=date(2026, 3, 9))
    last = store.get(watch.id).last_run
    assert last is not None
    before = read_outcome(Path(last.folder))
    assert before is not None
    held = {item.id for item in before.evidence}

    def degraded(settings: Settings) -> httpx2.AsyncClient:
        down = {"www.ebi.ac.uk", "clinicaltrials.gov"}
        return make_http_client(ClockedTransport(Unreachable(demo_transport(), down), settings.demo_today))

    outcome = await run_watch_once(store.get(watch.id), later, store, client_factory=degraded)
    assert set(outcome.changes.sources_unavailable) == {"europepmc", "clinicaltrials"}
    assert not outcome.changes.changed
    assert not outcome.alerted
    after = read_outcome(outcome.folder)
    assert after is not None
    kept = {item.id for item in after.evidence}
    assert held <= kept  # what the silent sources gave before is carried forward, not lost
    report = (outcome.folder / "report.md").read_text(encoding="utf-8")
    assert "Not a change in the evidence: clinicaltrials, europepmc did not answer" in report


class KilledError(Exception):
    """Stands for the process dying mid-run."""


async def test_a_watch_run_killed_mid_way_continues_where_it_stopped(tmp_path: Path) -> None:
    base, store, watch = await baseline(tmp_path)
    late = base.with_values(demo_today=date(2026, 7, 1))

    def die_in_the_second_iteration(event: ProgressEvent) -> None:
        if isinstance(event, IterationStarted) and event.iteration == 2:  # iteration 1 is checkpointed
            raise KilledError

    with pytest.raises(KilledError):
        await run_watch_once(store.get(watch.id), late, store, on_event=die_in_the_second_iteration)
    assert len(store.history(watch.id)) == 1  # the killed run is not in the history
    resumed = await run_watch_once(store.get(watch.id), late, store)
    record = json.loads((resumed.folder / "run.json").read_text(encoding="utf-8"))
    assert record["resumed"] is True
    assert [study.id for study in resumed.changes.new_studies] == ["pmid:99000508"]
    assert [study.id for study in resumed.changes.newly_retracted] == ["pmid:99000505"]
    assert [run.folder for run in store.history(watch.id)][-1] == str(resumed.folder)


async def test_a_run_no_source_answered_changes_nothing_and_the_next_searches_from_the_last_full_run(
    tmp_path: Path,
) -> None:
    base, store, watch = await baseline(tmp_path, sources="pubmed,europepmc,clinicaltrials")
    late = base.with_values(demo_today=date(2026, 7, 1))

    def all_down(settings: Settings) -> httpx2.AsyncClient:
        hosts = {"eutils.ncbi.nlm.nih.gov", "www.ebi.ac.uk", "clinicaltrials.gov"}
        return make_http_client(ClockedTransport(Unreachable(demo_transport(), hosts), settings.demo_today))

    silent = await run_watch_once(store.get(watch.id), late, store, client_factory=all_down)
    assert set(silent.changes.sources_unavailable) == {"pubmed", "europepmc", "clinicaltrials"}
    assert not silent.changes.changed
    assert not silent.alerted
    assert "not re-checked" in silent.changes.recheck
    later = await run_watch_once(store.get(watch.id), base.with_values(demo_today=date(2026, 7, 2)), store)
    assert later.changes.since == date(2026, 3, 1)  # not 2026-07-01: nothing was asked for then
    assert [study.id for study in later.changes.new_studies] == ["pmid:99000508"]
    assert [study.id for study in later.changes.newly_retracted] == ["pmid:99000505"]


async def test_a_watch_run_writes_each_file_of_its_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ "What changed" is an addendum given to the run before its files are written: the report, its document
    and changes.json are each written once, never read back and spliced."""
    base, store, watch = await baseline(tmp_path)
    written: list[str] = []
    write_text = Path.write_text

    def counting(path: Path, *args: object, **kwargs: object) -> int:
        if path.name in ("report.md", REPORT_DOCUMENT_FILE, "changes.json"):
            written.append(path.name)
        return write_text(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", counting)
    later = await run_watch_once(store.get(watch.id), base.with_values(demo_today=date(2026, 7, 1)), store)
    assert sorted(written) == sorted(["report.md", REPORT_DOCUMENT_FILE, "changes.json"])
    report = (later.folder / "report.md").read_text(encoding="utf-8")
    assert report.index("## What changed since 2026-03-01") < report.index("## Verdict")
    document = ReportDocument.model_validate_json((later.folder / REPORT_DOCUMENT_FILE).read_bytes())
    assert to_markdown(document) == report
