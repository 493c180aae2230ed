"""End to end, in demo mode, over real sockets and processes: the MCP SDK's own client over stdio and over
streamable HTTP, and a real headless Chromium driving the page. The HTTP server is the real app under
uvicorn on a free loopback port, with one hostile search result mixed into the demo data."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from deepcritical.outputs import Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.report.document import Link, ReportDocument, heading, paragraph
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.run.store import RunInfo, RunSummary
from deepcritical.service.watches import WatchRun
from deepcritical.service.watches_sqlite import WatchStore
from helpers.hostile_app import PWNED
from helpers.page import CHROMIUM, CHROMIUM_ARGS, RUN_MS, Server, environment, served

pytestmark = pytest.mark.model

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"
PLANTED_RUN = "research-20240101-000000-0bad00"
# A report as a tampered (or buggy) writer could leave it: raw HTML and script links in the Markdown itself.
# A past run's report document (report.json) whose every text is hostile: planted on disk, as a tampered or
# hostile folder would hold it.
PLANTED_REPORT = ReportDocument(
    blocks=[
        heading(f"Planted <script>{PWNED}='heading'</script>", level=1),
        paragraph(f"<img src=x onerror=\"{PWNED}='block'\">"),
        paragraph(
            f"Inline <b onmouseover=\"{PWNED}='bold'\">bold</b> and ",
            Link(text="a link", url=f"javascript:{PWNED}='link'"),
        ),
        heading("References"),
        paragraph(f"<svg onload=\"{PWNED}='svg'\"></svg>"),
    ]
)


def plant_hostile_run(home: Path) -> None:
    folder = home / "runs" / PLANTED_RUN
    folder.mkdir(parents=True)
    info = RunInfo(
        run_id=PLANTED_RUN,
        question=f"<img src=x onerror=\"{PWNED}='question'\">",
        frame=QuestionFrame(intervention=f"<img src=x onerror=\"{PWNED}='frame'\">", outcomes=["<b>x</b>"]),
        status="finished",
        demo=True,
        max_iterations=1,
        sources=["web"],
        reader="transformer",
        created_at="2024-01-01T00:00:00+00:00",
    )
    (folder / "status.json").write_text(info.model_dump_json())
    (folder / "report.json").write_text(PLANTED_REPORT.model_dump_json())
    (folder / "report.md").write_text(to_markdown(PLANTED_REPORT))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The page's app with a planted hostile run (``plant_hostile_run``), served by ``served``."""
    home = tmp_path_factory.mktemp("serve-home")
    plant_hostile_run(home)
    with served(home) as running:
        yield running


# Every word (up to 20 characters; a hyphen or a slash may end a line) of the report's table cells that the
# page shows on more than one line.
WORDS_BROKEN_IN_TABLES = """() => [...document.querySelectorAll('#report td, #report th')].flatMap(cell => {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/[^\\s\\-\\/–—]{2,20}/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      if (new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size > 1) broken.push(word[0]);
    }
  }
  return broken;
})"""


def text_of(result: object) -> str:
    return "".join(block.text for block in getattr(result, "content", []) if isinstance(block, TextContent))


async def research_through(client: Client) -> tuple[dict[str, object], list[str]]:
    messages: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    result = await client.call_tool(
        "research", {"question": QUESTION, "max_iterations": 1}, progress_callback=on_progress
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content, messages


async def test_mcp_over_stdio_lists_tools_searches_and_researches(tmp_path: Path) -> None:
    command = StdioServerParameters(
        command=sys.executable, args=["-m", "deepcritical", "mcp", "--demo"], env=environment(tmp_path)
    )
    async with Client(command, read_timeout_seconds=RUN_MS / 1000) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == {
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
        found = await client.call_tool("search_literature", {"query": "metformin alzheimer", "max_results": 3})
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None
        evidence = found.structured_content["evidence"]
        assert found.structured_content["synthetic_demo_data"] is True
        assert evidence
        assert all(item["id"] and item["title"].startswith("[DEMO]") for item in evidence)

        run, progress = await research_through(client)
        assert run["status"] == "finished"
        report = str(run["report_markdown"])
        assert report.startswith(f"# {QUESTION}")
        assert "DEMO MODE" in report
        assert "## References" in report
        assert progress[0].startswith("run research-")
        assert "iteration 1/1" in progress
        assert progress[-1] == "run ended: finished"

        again = await client.call_tool("get_run", {"run_id": run["run_id"]})
        assert again.structured_content is not None
        assert again.structured_content["report_markdown"] == report
    assert (tmp_path / "runs" / str(run["run_id"]) / "report.md").is_file()


async def test_mcp_over_http_researches_and_the_run_is_the_pages_run_too(server: Server) -> None:
    async with Client(f"{server.url}/mcp", read_timeout_seconds=RUN_MS / 1000) as client:
        assert "research" in {tool.name for tool in (await client.list_tools()).tools}
        run, progress = await research_through(client)
    assert run["status"] == "finished"
    assert "## References" in str(run["report_markdown"])
    assert any(line.startswith("searched ") for line in progress)
    async with httpx2.AsyncClient(base_url=server.url) as http:
        listed = (await http.get("/api/runs")).json()
        assert run["run_id"] in [item["run_id"] for item in listed]
        report = await http.get(f"/api/runs/{run['run_id']}/report.md")
        assert report.text == run["report_markdown"]


@pytest.fixture
def browser_page(server: Server) -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": 1100, "height": 900})
        finally:
            browser.close()


def watched(page: object) -> tuple[list[str], list[str]]:
    """The page's console lines and the dialogs it opened (each dismissed), as they come."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    console: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return console, dialogs


def assert_nothing_ran(page: object, console: list[str], dialogs: list[str]) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    assert page.evaluate(f"typeof {PWNED}") == "undefined"
    assert dialogs == []
    # Had markup reached the DOM as HTML, the CSP would have blocked it and said so: it never had to.
    assert [line for line in console if "Content Security Policy" in line] == []
    assert page.locator("#report script, #report svg, #report [onerror], #report [onload]").count() == 0
    # The one kind of image: the run's own figures, fetched by the page and shown from blob: URLs
    for kind, source in page.locator("#report img").evaluate_all("images => images.map(i => [i.className, i.src])"):
        assert kind == "figure"
        assert source == "" or source.startswith("blob:"), source
    for href in page.locator("#report a").evaluate_all("links => links.map(link => link.getAttribute('href'))"):
        assert re.match(r"^(https?://|#ref-\d+$|/api/runs/[\w-]+/(prisma\.svg|forest-\d+\.(svg|png))$)", href), href


def test_the_page_runs_the_demo_question_live_and_renders_hostile_evidence_as_text(
    server: Server, browser_page: object, tmp_path: Path
) -> None:
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    console, dialogs = watched(page)

    page.goto(server.url)
    expect(page.locator("#demo-banner")).to_be_visible()
    expect(page.locator("#reader")).to_have_value("linear")  # the server's own reader, the other one offered
    assert page.locator("#reader option").evaluate_all("options => options.map(o => o.value)") == [
        "linear",
        "transformer",
    ]
    # Note whether the report is still hidden when the first progress line appears.
    page.evaluate(
        """() => new MutationObserver((changes, observer) => {
             window.reportHiddenAtFirstProgress = document.getElementById('report').hidden;
             observer.disconnect();
           }).observe(document.getElementById('progress'), {childList: true})"""
    )
    # By keyboard: the example question, then the submit button.
    page.get_by_role("button", name=QUESTION).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#question")).to_have_value(QUESTION)
    page.locator("#submit").focus()
    page.keyboard.press("Enter")

    expect(page.locator("#progress li").first).to_be_visible(timeout=RUN_MS)
    expect(page.locator("#report h2", has_text="References")).to_be_visible(timeout=RUN_MS)
    assert page.evaluate("window.reportHiddenAtFirstProgress") is True
    # The run has finished: the report leads, and its progress and downloads are folded away under it.
    expect(page.locator("#progress-box")).not_to_have_attribute("open", "")
    expect(page.locator("#downloads")).not_to_have_attribute("open", "")
    progress = page.locator("#progress").text_content() or ""
    # The server's lines, as the command line words them (each stored event carries its line).
    assert "iteration 1/" in progress
    assert "searched " in progress
    assert "run ended: finished" in progress
    expect(page.locator("#run-frame")).to_have_text(
        "Question frame. Population: Alzheimer's disease · Intervention: metformin"
    )
    expect(page.locator("#run-settings")).to_contain_text("result reader: linear")
    assert page.locator("#report li[id^='ref-']").count() >= 3
    expect(page.locator("#files")).to_contain_text("report.md")
    expect(page.locator("#files")).to_contain_text("run.json")

    citation = page.locator("#report a.cite").first
    target = citation.get_attribute("href")
    assert target is not None
    citation.click()
    expect(page).to_have_url(re.compile(re.escape(target) + "$"))
    expect(page.locator(target)).to_be_in_viewport()
    assert page.evaluate("document.querySelector(':target').id") == target[1:]

    # The hostile titles of the cited papers show their markup as text, and it does nothing.
    expect(page.locator("#report")).to_contain_text(f"<script>{PWNED}='title'</script>")
    assert_nothing_ran(page, console, dialogs)
    shot = tmp_path / "finished-demo-run.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000

    # At phone width the page fits: no sideways scrolling.
    page.set_viewport_size({"width": 360, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # ...and no word of the report's tables is broken across lines (they broke letter by letter).
    assert page.locator("#report table td").count() > 0
    assert page.evaluate(WORDS_BROKEN_IN_TABLES) == []

    # A past run whose report document holds raw HTML and script links: reopened, it renders inert too.
    page.goto(f"{server.url}/?run={PLANTED_RUN}")
    expect(page.locator("#report")).to_contain_text(f"<script>{PWNED}='heading'</script>")
    expect(page.locator("#run-question")).to_contain_text("onerror")
    expect(page.locator("#run-frame")).to_contain_text("Intervention: <img src=x onerror")
    expect(page.locator("#run-frame")).to_contain_text("Outcomes: <b>x</b>")
    expect(page.locator("#run-settings")).to_have_text(
        "Sources: the web (DuckDuckGo) · search rounds at most: 1 · result reader: transformer · demo"
    )
    expect(page.locator("#run-list")).to_contain_text("onerror")
    assert_nothing_ran(page, console, dialogs)


SGLT2 = "Do SGLT2 inhibitors improve outcomes in heart failure?"


def test_the_page_shows_the_sglt2_runs_hazard_ratios_sortable_its_forest_notes_and_flow(
    server: Server, browser_page: object, tmp_path: Path
) -> None:
    """The issue's done-when, in a real browser: the study-results table with its hazard ratios, sorted by a
    click; the forest plots' notes and the PRISMA flow drawn as an image. ``PLOTS_SCREENSHOTS`` keeps the
    screenshots."""
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    console, dialogs = watched(page)
    page.goto(server.url)
    page.get_by_role("button", name=SGLT2).click()
    page.locator("#submit").click()
    expect(page.locator("#report h2", has_text="References")).to_be_visible(timeout=RUN_MS)

    table = page.locator("#report table.sortable")
    expect(table).to_contain_text("HR 0.77 [0.72, 0.82]")
    effects = table.locator("tbody tr td[data-label='Effect [95% CI]']")
    before = effects.all_inner_texts()
    assert sum(text.startswith("HR ") for text in before) >= 5
    table.get_by_role("button", name="Effect [95% CI]").click()
    expect(table.locator("th[aria-sort='ascending']")).to_have_count(1)
    hazards = [float(text.split()[1]) for text in effects.all_inner_texts() if text.startswith("HR ")]
    assert hazards == sorted(hazards)
    table.get_by_role("button", name="Effect [95% CI]").click()
    hazards = [float(text.split()[1]) for text in effects.all_inner_texts() if text.startswith("HR ")]
    assert hazards == sorted(hazards, reverse=True)

    # Issue 40: the SGLT2 demo's studies of each outcome are of different kinds (a meta-analysis beside a trial it
    # pooled, or a preprint), so its forest plots say why there is none; a drawn plot is in test_page_answer_first.
    expect(page.locator("#report p", has_text="a review is never drawn beside the trials")).to_have_count(3)
    for name in ("prisma.svg",):
        figure = page.locator(f"#report img[data-run-file='{name}']")
        expect(figure).to_have_attribute("src", re.compile(r"^blob:"))
        page.wait_for_function(
            "name => { const i = document.querySelector(`#report img[data-run-file='${name}']`);"
            " return i && i.complete && i.naturalWidth > 0; }",
            arg=name,
        )
    assert_nothing_ran(page, console, dialogs)
    shots = Path(os.environ.get("PLOTS_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page.locator("#report h2", has_text="Study results").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-study-results.png"))
    page.locator("#report h2", has_text="Forest plots").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-forest-plot.png"))
    page.locator("#report h2", has_text="Study flow").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-prisma-flow.png"))
    page.screenshot(path=str(shots / "sglt2-page.png"), full_page=True)
    assert (shots / "sglt2-page.png").stat().st_size > 10_000


def test_the_pages_watch_history_words_a_maybe_by_its_split_and_charts_the_favourable_share(
    server: Server, browser_page: object
) -> None:
    """A new user's demo watch (vitamin D and depression) showed "maybe (0.88)" then "maybe (0.70)" and a chart of
    "Verdict confidence" falling, while the favourable share had risen from 0.562 to 0.649, a hair from yes. The
    history words each verdict as the report does, and the chart draws the favourable share with its 0.35 and
    0.65 marks."""
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    store = WatchStore.at_home(server.home)
    at = datetime(2026, 3, 1, 12, tzinfo=UTC)
    watch = store.add("Does vitamin D supplementation prevent or treat depression?", now=at)
    for days, confidence, share in ((0, 0.875, 0.562), (122, 0.7, 0.649)):
        run = WatchRun(
            run_at=at + timedelta(days=days), folder="/f", verdict="maybe", confidence=confidence, counted=6,
            changed=bool(days), confidence_is_split=True, favourable_share=share,
        )  # fmt: skip
        store.record_run(watch.id, run, next_due=run.run_at + timedelta(days=7))
    page.goto(server.url)
    limit = str(httpx2.get(f"{server.url}/api/info").json()["max_question_chars"])
    # A longer question pasted to watch was cut at the field's own 1,000 characters without a word.
    expect(page.locator("#watch-question")).to_have_attribute("maxlength", limit)
    expect(page.locator("#question")).to_have_attribute("maxlength", limit)
    item = page.locator("#watch-list li", has_text="vitamin D supplementation prevent or treat")
    expect(item).to_contain_text(
        "last verdict: maybe (the studies are divided: 0.70, where 1 is an even split; favourable share 0.649)"
    )
    item.get_by_role("button", name="History").click()
    expect(item.locator(".watch-history")).to_contain_text(
        "maybe (the studies are divided: 0.88, where 1 is an even split; favourable share 0.562)"
    )
    expect(item.locator(".confidence-chart title")).to_have_text(
        "Favourable share of the weighed studies (yes from 0.65, no up to 0.35) over 2 runs: "
        "2026-03-01 0.562, 2026-07-01 0.649"
    )
    expect(item.locator(".confidence-chart line.threshold")).to_have_count(2)
    # Issue 40: axes with their values, and dates in ISO 8601 whatever the browser's locale.
    labels = item.locator(".confidence-chart text").all_text_contents()
    assert {"0", "0.35", "0.65", "1", "2026-03-01", "2026-07-01"} <= set(labels), labels
    assert item.locator(".confidence-chart line.axis").count() >= 2
    expect(item.locator(".watch-history > li").first).to_contain_text("2026-03-01: maybe")


def test_past_runs_show_each_runs_verdict_and_reader(server: Server, browser_page: object) -> None:
    """A new user ran "Could metformin slow Alzheimer's disease?" with each reader: the list showed two identical
    "finished" lines, though one run's verdict was maybe and the other's no. Each line says both."""
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    question = "Could metformin slow cognitive decline in the very old?"
    for second, reader, label in ((0, "linear", "maybe"), (1, "transformer", "no")):  # newest first in the list
        run_id = f"research-20240102-00000{second}-0aaa0{second}"
        summary = RunSummary(
            stop_reason="sufficient", iterations=1, evidence=3, references=3, sources={"pubmed": 3}, degraded=False,
            report_fallback=False, llm_requests=0, seconds=1.0, verdict=Verdict(label=label, confidence=0.8),
        )  # fmt: skip
        info = RunInfo(
            run_id=run_id, question=question, status="finished", demo=True, max_iterations=1, sources=["pubmed"],
            reader=reader, created_at=f"2024-01-02T00:00:0{second}+00:00", summary=summary,
        )  # fmt: skip
        (server.home / "runs" / run_id).mkdir(parents=True)
        (server.home / "runs" / run_id / "status.json").write_text(info.model_dump_json())
    page.goto(server.url)
    listed = page.locator("#run-list li", has_text=question)
    expect(listed).to_have_count(2)
    expect(listed.nth(0)).to_contain_text("verdict: no · transformer reader")
    expect(listed.nth(1)).to_contain_text("verdict: maybe · linear reader")
