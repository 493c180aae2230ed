"""Text from outside is data: control characters never reach the terminal or a question, and web
snippets lose their markup and entities before they become evidence (the raw item stays in ``raw``)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from deepcritical.cli.research import describe
from deepcritical.cli.search import render_search_table
from deepcritical.events import JudgeFinished, QueriesPlanned, RunStarted, RunWarning, SearchFinished
from deepcritical.models import Citation, Evidence, SearchResult, SourceFailure
from deepcritical.run.search import SearchOutcome
from deepcritical.sources.searxng import parse_response, results_to_evidence
from deepcritical.sources.web import clean_web_text, text_of
from deepcritical.text import one_line, without_controls

# ESC sequences that recolour, clear the screen, set the window title; BEL, BS, DEL, NUL, a C1 CSI,
# and a right-to-left override.
HOSTILE = "\x1b[31mred\x1b[0m \x1b[2J\x1b]0;pwned\x07 bell\x07 back\x08space del\x7f nul\x00 csi\x9b1m rtl\u202eevil"
CONTROLS = {chr(code) for code in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)]}


def has_controls(text: str) -> bool:
    return bool(set(text) & (CONTROLS | {"\u202e"}))


def test_questions_and_lines_lose_every_control_character() -> None:
    cleaned = one_line(HOSTILE + "\nsecond\tline\r\n")
    assert not has_controls(cleaned)
    assert "\n" not in cleaned
    assert "\t" not in cleaned
    # Whole escape sequences go, their parameters too: nothing of "ESC[31m" or "ESC]0;pwned BEL" is left.
    assert cleaned.startswith("red bell backspace del nul csi1m rtlevil second line")  # a lone C1 CSI is dropped


def test_multi_line_text_keeps_its_lines() -> None:
    assert without_controls("Background:\n\tline\x1b[1m two\r\n") == "Background:\n\tline two\r\n"


def render(line: Text | None) -> str:
    assert line is not None
    buffer = io.StringIO()
    Console(file=buffer, force_terminal=True, color_system="truecolor", width=500).print(line, highlight=False)
    return buffer.getvalue()


def no_outside_escape(rendered: str) -> bool:
    """Rich itself writes colour sequences (ESC[...m) for its own markup; nothing else may appear."""
    import re

    without_rich_styles = re.sub(r"\x1b\[[0-9;]*m", "", rendered)
    return not has_controls(without_rich_styles.replace("\n", ""))


@pytest.mark.parametrize(
    "event",
    [
        RunStarted(
            run_id="r",
            question=HOSTILE,
            demo=False,
            model=HOSTILE,
            sources=["pubmed"],
            sources_disabled={"you": HOSTILE},
            max_iterations=3,
        ),
        QueriesPlanned(iteration=1, queries=[HOSTILE, "statins"]),
        SearchFinished(
            iteration=1,
            queries=[HOSTILE],
            sources_answered=["pubmed"],
            sources_failed={"web": HOSTILE},
            found=1,
            kept=1,
            deduplicated=0,
            related=0,
            total_evidence=1,
            capped=False,
        ),
        JudgeFinished(
            iteration=1, items_judged=1, scores={"mechanism": 5}, sufficient=False, confidence=0.2, gaps=[HOSTILE]
        ),
        RunWarning(message=HOSTILE),
    ],
)
def test_progress_lines_carry_no_escape_sequence_from_outside(event: object) -> None:
    rendered = render(describe(event))  # type: ignore[arg-type]
    assert no_outside_escape(rendered), repr(rendered)
    assert "red bell backspace" in rendered  # the text is shown, only defused


def test_the_search_table_carries_no_escape_sequence_from_outside() -> None:
    item = Evidence(
        content="body",
        citation=Citation(source="web", title=HOSTILE, url="https://example.org/\x1b[2J", date="\x1b[5m2024"),
        found_by=("web",),
    )
    result = SearchResult(
        query=HOSTILE,
        evidence=[item],
        sources_searched=["web"],
        total_found=1,
        failures=[SourceFailure(source="pubmed", reason=HOSTILE)],
    )
    result.disabled = {"you": HOSTILE}
    outcome = SearchOutcome(result=result, demo=False, run_id="search-1", evidence=[item])
    out, err = io.StringIO(), io.StringIO()
    render_search_table(
        outcome,
        Console(file=out, force_terminal=True, width=300),
        Console(file=err, force_terminal=True, width=300),
    )
    assert no_outside_escape(out.getvalue()), repr(out.getvalue())
    assert no_outside_escape(err.getvalue()), repr(err.getvalue())


def test_a_demo_search_table_links_to_no_page() -> None:
    """The demo's records have synthetic PMIDs and NCT numbers: their PubMed and ClinicalTrials.gov links
    opened "not found" (or another trial)."""
    items = [
        Evidence(
            content="body",
            citation=Citation(source=source, title="[DEMO] A trial", url=url, date="2024"),
            found_by=(source,),
        )
        for source, url in [
            ("pubmed", "https://pubmed.ncbi.nlm.nih.gov/99000108/"),
            ("clinicaltrials", "https://clinicaltrials.gov/study/NCT99000102"),
        ]
    ]
    result = SearchResult(query="q", evidence=items, sources_searched=["pubmed"], total_found=2)
    for demo in (True, False):
        out = io.StringIO()
        outcome = SearchOutcome(result=result, demo=demo, run_id="search-1", evidence=items)
        render_search_table(outcome, Console(file=out, width=300), Console(file=io.StringIO(), width=300))
        shown = out.getvalue()
        assert ("pubmed.ncbi" in shown, "clinicaltrials.gov/" in shown) == (not demo, not demo)
        assert shown.count("none (synthetic record)") == (2 if demo else 0)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<b>Metformin</b> and <em>AD</em>", "Metformin and AD"),
        ("Statins &amp; sepsis &mdash; a review &quot;2024&quot;", 'Statins & sepsis — a review "2024"'),
        ("IC50 &lt; 5 nM and p&lt;0.05", "IC50 < 5 nM and p<0.05"),
        ("&lt;b&gt;double&lt;/b&gt; escaped", "double escaped"),
        ("a <span class='highlight'>highlighted</span>\n\n  word", "a highlighted word"),
        ("line<br/>break<p>paragraph</p>", "line break paragraph"),
        ("ESC \x1b[31m inside", "ESC inside"),
        (None, ""),
        (42, ""),
    ],
)
def test_web_snippets_lose_markup_entities_and_extra_space(raw: object, clean: str) -> None:
    assert clean_web_text(raw) == clean


def test_text_of_removes_controls_but_keeps_urls_intact() -> None:
    assert text_of(" https://example.org/a?b=1&c=2 ") == "https://example.org/a?b=1&c=2"
    assert text_of("x\x1b[2Jy") == "xy"


def test_searxng_results_become_clean_evidence_and_keep_the_raw_item() -> None:
    item = {
        "url": "https://example.org/paper",
        "title": "Metformin &amp; <b>Alzheimer&#39;s</b> disease",
        "content": "A <b>cohort</b> of 7,086 patients &mdash; risk &lt; 1.0&nbsp;overall.",
        "engine": "bing",
        "score": 1.0,
    }
    results = parse_response("metformin", {"results": [item], "number_of_results": 1})
    [evidence] = results_to_evidence(results)
    assert evidence.citation.title == "Metformin & Alzheimer's disease"
    assert evidence.content == "A cohort of 7,086 patients — risk < 1.0 overall."
    assert results.results[0].raw["title"] == item["title"]  # as the instance sent it
    assert results.results[0].raw["content"] == item["content"]
