"""Issue 40 in a real headless Chromium (Debian's, at /usr/bin/chromium), at a laptop's 1280 px and a phone's
390 px: the answer within the first 600 px of the report page (700 px on a phone, with its confidence), the run's
progress and downloads folded away once it finished, every column of the study-results table within the page (its
longest ones behind each row's "More"; cards on a phone, which the header row still sorts), and every figure drawn
unshrunk, its smallest text 12 px (a box that scrolls sideways on a phone). The screenshots are kept as the test's
artefacts: in ``PAGE_SCREENSHOTS`` when set, else the test's temporary folder, whose path the test prints."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.models import Evidence, Grade
from deepcritical.outputs import ResearchReport
from deepcritical.report.document import REPORT_DOCUMENT_FILE
from deepcritical.report.figure_data import build_figures
from deepcritical.report.figure_files import write_figures
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document
from deepcritical.run.store import RunInfo
from helpers.builders import evidence
from helpers.page import CHROMIUM, CHROMIUM_ARGS, RUN_MS, Server, served

pytestmark = pytest.mark.model

SGLT2 = "Do SGLT2 inhibitors improve outcomes in heart failure?"
FOREST_RUN = "research-20240101-000000-f02e57"
ANSWER_WITHIN = 600  # px from the top of the page, at 1280 px wide
# At 390 px: of a phone's 844 px screen, its browser's bars leave about 660 to 750 px to the page.
PHONE_ANSWER_WITHIN = 700
SMALLEST_TEXT = 11  # px, as drawn on the page
WIDTHS = {"laptop": (1280, 800), "phone": (390, 844)}
TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")


def trial(pmid: str, author: str, year: str, text: str) -> Evidence:
    title = f"A randomised trial of an SGLT2 inhibitor in heart failure ({pmid})"
    grade = TRIAL.model_copy(update={"sample_size": 4000})
    return evidence(text, pmid=pmid, title=title, authors=(author, "Roe R"), date=year, grade=grade)


THREE_TRIALS = [
    trial("1", "McMurray JJ", "2019", "RESULTS: In patients with heart failure, dapagliflozin reduced first "
          "hospitalisation for heart failure (HR 0.70, 95% CI 0.59 to 0.83)."),
    trial("2", "Packer M", "2020", "RESULTS: In patients with heart failure, empagliflozin reduced first "
          "hospitalisation for heart failure (HR 0.69, 95% CI 0.59 to 0.81)."),
    trial("3", "Anker SD", "2021", "RESULTS: In patients with heart failure, empagliflozin reduced first "
          "hospitalisation for heart failure (HR 0.71, 95% CI 0.60 to 0.83)."),
]  # fmt: skip


def plant_forest_run(home: Path) -> None:
    """A finished run whose report draws one forest plot of three trials, written by the report's own code."""
    folder = home / "runs" / FOREST_RUN
    folder.mkdir(parents=True)
    evidence = {item.id: item for item in THREE_TRIALS}
    counted = counted_items(SGLT2, evidence, ())
    numbers = {item.id: number for number, item in enumerate(THREE_TRIALS, 1)}
    figures = build_figures(counted, evidence, numbers)
    assert len(figures.forest_plots) == 1
    report = ResearchReport(question=SGLT2, answer_brief="Three trials.", key_findings=[], references=list(evidence))
    context = RenderContext(demo=True, stop_reason="sufficient", run_id=FOREST_RUN, counted=counted, figures=figures)
    document = build_document(report, evidence, context)
    (folder / REPORT_DOCUMENT_FILE).write_text(document.model_dump_json(), encoding="utf-8")
    (folder / "report.md").write_text(to_markdown(document), encoding="utf-8")
    write_figures(figures, folder)
    info = RunInfo(
        run_id=FOREST_RUN, question=SGLT2, status="finished", demo=True, max_iterations=1, sources=["pubmed"],
        created_at="2024-01-01T00:00:00+00:00",
    )  # fmt: skip
    (folder / "status.json").write_text(info.model_dump_json(), encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real app in demo mode with a planted run that has forest plots, on a free loopback port."""
    home = tmp_path_factory.mktemp("answer-first-home")
    plant_forest_run(home)
    with served(home) as running:
        yield running


@pytest.fixture
def page(server: Server) -> Iterator[object]:
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            width, height = WIDTHS["laptop"]
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    import os

    folder = Path(os.environ.get("PAGE_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {folder}")
    return folder


# Each figure on the page: its drawn and natural width, and its box's visible and whole width.
FIGURES = """() => [...document.querySelectorAll('#report img.figure')].map(i => ({
  file: i.dataset.runFile, shown: i.clientWidth, natural: i.naturalWidth,
  box: i.parentElement.clientWidth, scroll: i.parentElement.scrollWidth}))"""
# Each header and cell of the study-results table that reaches outside the page's width (cut, or off to the side).
TABLE_OUTSIDE = """selector => { const t = document.querySelector(selector || '#report table.sortable');
  if (!t) return null;
  const box = t.parentElement.getBoundingClientRect();
  const right = Math.min(box.right, document.documentElement.clientWidth);
  return [...t.querySelectorAll('th, td')]
    .filter(c => c.getClientRects().length && c.getBoundingClientRect().right > right + 1)
    .map(c => c.dataset.label || c.textContent.trim()); }"""


# The bottom of a paragraph's opening up to its first ")": the verdict's label and its confidence.
VERDICT_LINE_BOTTOM = """p => { const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
  const range = document.createRange(); range.setStart(p, 0);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(')'); if (at >= 0) { range.setEnd(node, at + 1); break; } }
  return range.getBoundingClientRect().bottom + window.scrollY; }"""


def smallest_text(svg: str) -> float:
    return min(float(size) for size in re.findall(r'font-size="([\d.]+)"', svg))


def wait_for_figures(page: object) -> None:
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('#report img.figure')].every(i => i.complete && i.naturalWidth > 0)"
    )


def check_figures(page: object, folder: Path, phone: bool) -> list[dict[str, float]]:
    """Every figure drawn at its own size (never shrunk), so its smallest text is the drawing's; at 1280 px its
    box shows it whole, on a phone the box scrolls sideways and the page does not."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    figures = page.evaluate(FIGURES)
    assert figures
    for figure in figures:
        scale = figure["shown"] / figure["natural"]
        text = smallest_text((folder / figure["file"]).read_text(encoding="utf-8"))
        print(f"{figure['file']}: scale {scale:.2f}, smallest text {scale * text:.1f} px, box {figure['box']} px")
        assert scale * text >= SMALLEST_TEXT, (figure, text)
        if not phone:
            assert figure["scroll"] <= figure["box"], figure  # whole, no scrolling at a laptop's width
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]
    return figures


def test_the_sglt2_page_opens_with_the_answer_folds_the_run_and_fits_its_table_and_figures(
    server: Server, page: object, shots: Path
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(server.url)
    page.get_by_role("button", name=SGLT2).click()
    page.locator("#submit").click()
    expect(page.locator("#report h2", has_text="References")).to_be_visible(timeout=RUN_MS)
    wait_for_figures(page)
    page.evaluate("window.scrollTo(0, 0)")
    # The answer first: the verdict's heading and its label within the first 600 px of the page.
    page.screenshot(path=str(shots / "sglt2-1280-top.png"))
    answer = page.locator("#report h2:text('Verdict') + p > strong").first
    expect(answer).to_have_text("Yes")
    bottom = page.evaluate("e => e.getBoundingClientRect().bottom + window.scrollY", answer.element_handle())
    assert bottom <= ANSWER_WITHIN, bottom
    print(f"1280 px: the verdict's label ends {bottom:.0f} px from the top of the page")
    # The question and its frame are said once, by the report.
    expect(page.locator("#run-question")).to_be_hidden()
    expect(page.locator("#report h1")).to_have_text(SGLT2)
    # The run's progress and downloads are folded away under the report.
    expect(page.locator("#progress-box")).not_to_have_attribute("open", "")
    expect(page.locator("#downloads")).to_be_visible()
    assert page.evaluate("document.querySelector('#downloads').open") is False
    # Nothing of the study-results table is cut; its folded columns open from each row.
    page.locator("#report h2", has_text="Study results").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-1280-table.png"))
    assert page.evaluate(TABLE_OUTSIDE) == []
    widths = page.evaluate(
        "() => { const b = document.querySelector('#report .table-box'); return [b.scrollWidth, b.clientWidth]; }"
    )
    print(f"1280 px: the study-results table {widths[0]} px wide in a {widths[1]} px box")
    table = page.locator("#report table.sortable")
    headers = table.locator("thead th").all_text_contents()
    assert headers[-1] == "More"
    assert {"This result", "Study's reading"} <= set(headers)
    first = table.locator("tbody tr").first
    first.locator("td.more summary").click()
    expect(first.locator("td.more dl")).to_contain_text("Result as stated")
    page.screenshot(path=str(shots / "sglt2-1280-table-more.png"))
    run_id = page.evaluate("new URL(location.href).searchParams.get('run')")
    folder = server.home / "runs" / run_id
    check_figures(page, folder, phone=False)
    page.screenshot(path=str(shots / "sglt2-1280-page.png"), full_page=True)

    width, height = WIDTHS["phone"]
    page.set_viewport_size({"width": width, "height": height})
    page.reload()
    expect(page.locator("#report h2", has_text="References")).to_be_visible(timeout=RUN_MS)
    wait_for_figures(page)
    # The answer on the phone's first screen: the verdict's label and its confidence ("Yes (confidence 0.93, ...)").
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shots / "sglt2-390-top.png"))
    verdict = page.locator("#report h2:text('Verdict') + p").first
    expect(verdict).to_contain_text("confidence")
    bottom = page.evaluate(VERDICT_LINE_BOTTOM, verdict.element_handle())
    print(f"390 px: the verdict's label and confidence end {bottom:.0f} px from the top of the page")
    assert bottom <= PHONE_ANSWER_WITHIN, bottom
    # The summary of findings (the report's first table) is cards too: its certainty and what it means on screen.
    assert page.locator("#report table").first.locator("td").first.get_attribute("data-label") == "Outcome"
    page.locator("#report table").first.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-390-summary-of-findings.png"))
    assert page.evaluate(TABLE_OUTSIDE, "#report table") == []
    # Cards: every cell within the phone's width, under its column's name; the header row sorts them.
    page.locator("#report h2", has_text="Study results").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "sglt2-390-table.png"))
    assert page.evaluate(TABLE_OUTSIDE) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    by_n = page.locator("button.sort").filter(has_text=re.compile(r"^n$"))
    sort_by_n, header = table.locator("thead th").locator(by_n), table.locator("thead th").filter(has=by_n)
    for order in ("ascending", "descending"):
        sort_by_n.click()
        expect(header).to_have_attribute("aria-sort", order)
        shown = [text.strip() for text in table.locator("tbody td[data-label='n']").all_text_contents()]
        sizes = [int(text.replace(",", "")) for text in shown if text != "–"]
        assert len(sizes) > 1
        assert sizes == sorted(sizes, reverse=order == "descending"), shown
        assert shown[len(sizes) :] == ["–"] * (len(shown) - len(sizes))  # those without a size last
    page.screenshot(path=str(shots / "sglt2-390-table-sorted.png"))
    check_figures(page, folder, phone=True)
    page.screenshot(path=str(shots / "sglt2-390-page.png"), full_page=True)


def test_a_forest_plot_is_drawn_unshrunk_at_1280_and_scrolls_in_its_box_on_a_phone(
    server: Server, page: object, shots: Path
) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(f"{server.url}/?run={FOREST_RUN}")
    expect(page.locator("#report img[data-run-file='forest-1.svg']")).to_be_visible(timeout=RUN_MS)
    wait_for_figures(page)
    folder = server.home / "runs" / FOREST_RUN
    drawn = (folder / "forest-1.svg").read_text(encoding="utf-8")
    assert "Favours intervention" in drawn
    assert "Favours control" in drawn
    assert "[1] McMurray 2019" in drawn
    (forest,) = [f for f in check_figures(page, folder, phone=False) if f["file"] == "forest-1.svg"]
    assert forest["shown"] == forest["natural"]
    page.locator("#report img[data-run-file='forest-1.svg']").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "forest-1280.png"))

    width, height = WIDTHS["phone"]
    page.set_viewport_size({"width": width, "height": height})
    (forest,) = [f for f in check_figures(page, folder, phone=True) if f["file"] == "forest-1.svg"]
    assert forest["shown"] == forest["natural"]  # never shrinks
    assert forest["scroll"] > forest["box"]  # its box scrolls sideways
    page.locator("#report img[data-run-file='forest-1.svg']").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "forest-390.png"))
