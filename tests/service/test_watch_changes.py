"""What changed, computed from two run records: additions and new flags only, by every identity of a study;
a verdict change is marked; a failed run compares nothing."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from deepcritical.models import Citation, Evidence, Grade
from deepcritical.outputs import CitationAudit, ResearchReport, SearchStep, Verdict
from deepcritical.run.outcome import LlmUsage, ResearchOutcome
from deepcritical.service.watch_alerts import alert_body, alert_title
from deepcritical.service.watch_changes import compare, markdown_section
from deepcritical.service.watches import Watch, WatchOptions

QUESTION = "Does vitamin D supplementation reduce depressive symptoms?"
AT = datetime(2026, 7, 1, 12, tzinfo=UTC)
RESULT = (
    "Vitamin D supplementation reduced depressive symptoms compared with placebo "
    "(difference -2.5 points, 95% CI -3.4 to -1.6; p<0.001) in adults with depression."
)


def study(key: str, *, design: str = "randomized_controlled_trial", level: int | None = 2, **flags: bool) -> Evidence:
    citation = Citation(
        source="pubmed",
        title=f"Vitamin D supplementation and depressive symptoms: trial {key}",
        url=f"https://pubmed.ncbi.nlm.nih.gov/{key}/",
        pmid=key,
        date="2026",
    )
    grade = Grade(design=design, level=level, population="humans")  # type: ignore[arg-type]
    return Evidence(content=RESULT, citation=citation, grade=grade, **flags)


def web_page(key: str) -> Evidence:
    citation = Citation(source="web", title=f"Vitamin D and depression news {key}", url=f"https://news.example/{key}")
    return Evidence(content=RESULT, citation=citation, grade=Grade(design="web"))


def outcome(items: list[Evidence], label: str, confidence: float, *, design: str = "randomized_controlled_trial",
            failed_sources: dict[str, str] | None = None, error: str | None = None) -> ResearchOutcome:  # fmt: skip
    level = 1 if design == "meta-analysis" else 2
    verdict = Verdict(label=label, confidence=confidence, strongest_design=design, strongest_level=level)  # type: ignore[arg-type]
    step = SearchStep(
        queries=["q"], sources_answered=["pubmed"], sources_failed=failed_sources or {}, found=len(items),
        kept_ids=[], deduplicated=0, related_ids=[], duplicates={}, already_collected=0, capped=False, errors=[],
        search_seconds=0.0, store_seconds=0.0,
    )  # fmt: skip
    report = ResearchReport(question=QUESTION, answer_brief="-", key_findings=[])
    return ResearchOutcome(
        question=QUESTION,
        run_id="r",
        started_at=AT.isoformat(),
        demo=False,
        model="none",
        stop_reason="max_iterations",
        iterations=1,
        report=report,
        verdict=verdict,
        markdown="",
        report_fallback=True,
        citation_audit=CitationAudit(),
        evidence=items,
        assessments=[],
        plans=[],
        searches=[step],
        timings={},
        llm_usage=LlmUsage(),
        errors=[],
        settings={},
        error=error,
    )


def test_only_additions_and_new_flags_are_changes_matched_by_every_identity() -> None:
    held = [study("1"), study("2"), study("3"), web_page("a")]
    # 1 found again under its DOI too (same study), 2 retracted since, 3 not found again (a source was down),
    # 4 new, a new web page (not a study)
    again = study("1").model_copy(update={"citation": study("1").citation.model_copy(update={"doi": "10.1/x"})})
    now = [again, study("2", retracted=True), study("4"), web_page("b"), study("5", expression_of_concern=True)]
    changes = compare(
        outcome(held, "yes", 0.6), outcome(now, "yes", 0.62), watch_id="w-1", run_at=AT, since=date(2026, 3, 1)
    )
    assert [item.id for item in changes.new_studies] == ["pmid:4", "pmid:5"]
    assert changes.new_studies[0].reading == "favourable"
    assert [item.id for item in changes.newly_retracted] == ["pmid:2"]
    assert changes.newly_under_concern == []  # 5 is new (listed as new), not held before
    assert not changes.verdict_changed
    assert changes.changed


def test_a_verdict_change_and_a_new_strongest_design_are_marked() -> None:
    before = outcome([study("1")], "yes", 0.6)
    after = outcome([study("1"), study("9", design="meta_analysis", level=1)], "no", 0.7, design="meta-analysis")
    changes = compare(before, after, watch_id="w-1", run_at=AT, since=date(2026, 3, 1))
    assert changes.verdict_changed
    assert changes.new_strongest
    assert changes.summary()[-1] == "VERDICT CHANGED: yes (confidence 0.60) -> no (confidence 0.70)"
    watch = Watch(id="w-1", question=QUESTION, interval=timedelta(days=7), options=WatchOptions(), webhook=None,
                  created=AT, next_due=AT)  # fmt: skip
    assert alert_title(watch, changes).startswith("Verdict changed:")
    assert alert_body(watch, changes, Path("/runs/x"), Path("/home"))["event"] == "watch.verdict_changed"
    # The run named under the server's home, never by the server's own path (which names its user and layout).
    home = Path("/srv/alice/deepcritical")
    body = alert_body(watch, changes, home / "watches" / "w-1" / "runs" / "watch-1", home)
    assert (body["folder"], body["run_id"]) == ("watches/w-1/runs/watch-1", "watch-1")
    assert "/srv/alice" not in json.dumps(body)
    assert "**The verdict changed**" in markdown_section(changes)


def test_nothing_new_is_no_change_even_when_a_source_did_not_answer() -> None:
    held = [study("1"), study("2")]
    changes = compare(
        outcome(held, "yes", 0.6),
        outcome(held[:1], "yes", 0.6, failed_sources={"europepmc": "HTTP 503"}),
        watch_id="w-1", run_at=AT, since=date(2026, 3, 1),
    )  # fmt: skip
    assert not changes.changed
    assert changes.sources_unavailable == {"europepmc": "HTTP 503"}
    assert changes.summary() == ["nothing changed"]
    assert "Not a change in the evidence: europepmc" in markdown_section(changes)


def test_a_failed_run_and_a_first_run_compare_nothing() -> None:
    failed = compare(outcome([study("1")], "yes", 0.6), outcome([], "insufficient", 0.0, error="no source answered"),
                     watch_id="w-1", run_at=AT, since=None)  # fmt: skip
    first = compare(None, outcome([study("1")], "yes", 0.6), watch_id="w-1", run_at=AT, since=None)
    assert (failed.failed, failed.changed) == ("no source answered", False)
    assert first.baseline
    assert not first.changed
    assert markdown_section(first).startswith("## Watch baseline\n")  # not "What changed": nothing to compare
    assert "What changed" not in markdown_section(first)


def counted_maybe(share: float) -> Verdict:
    """A maybe as the counted studies' weighing gives it: its confidence is how evenly they split."""
    return Verdict(
        label="maybe", confidence=round(1 - abs(share - 0.5) * 2, 3), by="code",
        probabilities={"yes": share, "no": round(1 - share, 3)}, confidence_is_split=True,
    )  # fmt: skip


def test_a_maybe_that_moved_toward_yes_is_not_worded_as_confidence_lost() -> None:
    """A new user's demo watch (vitamin D and depression, 2026-03-01 then 2026-07-01) said "The verdict: maybe
    (0.88) -> maybe (0.70)", which reads as confidence lost; the favourable share had risen from 0.562 to 0.649,
    a hair from yes. A maybe's confidence is how evenly the evidence splits: said so, with the share it moved by."""
    before = outcome([study("1"), study("2")], "maybe", 0.0).model_copy(update={"verdict": counted_maybe(0.562)})
    after = outcome([study("1"), study("2")], "maybe", 0.0).model_copy(update={"verdict": counted_maybe(0.649)})
    changes = compare(before, after, watch_id="w-1", run_at=AT, since=date(2026, 3, 1))
    assert (
        "The verdict: maybe (the studies are divided: 0.88, where 1 is an even split; favourable share 0.562) -> maybe "
        "(the studies are divided: 0.70, where 1 is an even split; favourable share 0.649)"
    ) in markdown_section(changes)
    assert not changes.changed  # the same label: no alert, as before
    flipped = compare(before, outcome([study("1")], "yes", 0.66), watch_id="w-1", run_at=AT, since=None)
    assert flipped.summary()[-1] == (
        "VERDICT CHANGED: maybe (the studies are divided: 0.88, where 1 is an even split; favourable share 0.562) "
        "-> yes (confidence 0.66)"  # a model's yes: no share
    )


def test_a_study_retracted_since_says_how_the_run_before_read_it() -> None:
    """Whether the verdict before could have rested on a study now retracted: "(reads favourable before)"."""
    held = [study("1"), study("2")]
    retracted = study("2", retracted=True)
    changes = compare(
        outcome(held, "yes", 0.9), outcome([held[0], retracted], "yes", 0.9),
        watch_id="w-1", run_at=AT, since=date(2026, 3, 1),
    )  # fmt: skip
    assert changes.newly_retracted[0].read_before == "favourable"
    assert changes.summary() == [f"retracted since: {retracted.citation.title} (reads favourable before)"]
    assert "retracted; reads favourable before)" in markdown_section(changes)
