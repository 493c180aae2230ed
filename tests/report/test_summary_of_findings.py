"""The summary of findings at the top of a report (issue 38): the question's outcome, its effect, participants,
GRADE certainty with its reasons and the plain-language statement GRADE prescribes."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest

from deepcritical.appraisal.certainty import plain_language
from deepcritical.config import load_settings
from deepcritical.report.summary_of_findings import body_participants
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client
from helpers.builders import evidence_view


@pytest.mark.parametrize(
    ("answer", "certainty", "said"),
    [
        ("lower", "high", "Aspirin reduces strokes."),
        ("lower", "moderate", "Aspirin probably reduces strokes."),
        ("no difference", "low", "Aspirin may make little or no difference to strokes."),
        ("higher", "very low", "We are uncertain whether aspirin increases strokes (the evidence is very uncertain)."),
        (
            "uncertain effect",
            "moderate",
            "We are uncertain whether aspirin changes strokes (the studies' results differ).",
        ),
    ],
)
def test_the_plain_language_statement_is_the_one_grade_prescribes(answer: str, certainty: str, said: str) -> None:
    assert plain_language(answer, certainty, "aspirin", "strokes") == said  # type: ignore[arg-type]


def test_a_plural_intervention_takes_a_plural_verb() -> None:
    assert plain_language("no difference", "moderate", "statins", "mortality") == (
        "Statins probably make little or no difference to mortality."
    )


async def _report(question: str) -> str:
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
        settings = load_settings(demo_mode=True, home=Path(home))
        async with http_client(settings) as client:
            return (await Orchestrator(assemble(settings, client)).research(question)).markdown


def test_the_report_opens_with_its_summary_of_findings_and_the_certainty_reasons() -> None:
    markdown = asyncio.run(_report("Do statins reduce mortality in sepsis?"))
    sections = [line for line in markdown.splitlines() if line.startswith("## ")]
    # The answer first (the verdict and the answer in brief), then its summary of findings.
    assert sections[:3] == ["## Verdict", "## Answer in brief", "## Summary of findings"]
    summary = markdown.split("## Summary of findings", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in summary.splitlines() if line.startswith("| mortality |")]
    assert "RR " in row  # an effect with its interval
    assert "⊕" in row
    assert "Statins probably make little or no difference to mortality." in row
    assert "- GRADE starts high (randomised trials, 2 studies rated)" in summary
    assert "\nStatins compared with the comparator each study used. The answer: no difference." in summary


def test_a_question_naming_no_outcome_is_answered_on_the_outcome_the_trials_measured() -> None:
    markdown = asyncio.run(_report("Do SGLT2 inhibitors improve outcomes in heart failure?"))
    summary = markdown.split("## Summary of findings", 1)[1].split("\n## ", 1)[0]
    # Not "SGLT2 inhibitors reduce outcomes" under "The answer: lower": the movement is the primary outcome's.
    assert "reduce outcomes" not in summary
    assert "The answer: lower (a benefit), on the primary outcome of the studies, a composite of" in summary
    (row,) = [line for line in summary.splitlines() if line.startswith("| a composite of")]
    assert "(primary outcome)" in row
    assert "SGLT2 inhibitors reduce a composite of worsening heart failure or cardiovascular death." in row


def test_a_review_beside_trials_it_may_have_pooled_is_never_counted_twice() -> None:
    review = evidence_view("1", "Statins in sepsis: a meta-analysis", "Nine trials.", "meta_analysis", 1, 2275)
    trial = evidence_view("2", "Statins in sepsis: a trial", "A trial.", "randomized_controlled_trial", 2, 745)
    other = evidence_view("3", "Statins in sepsis: a second trial", "A trial.", "randomized_controlled_trial", 2, 2000)
    assert body_participants([trial, other], 2) == "2,745 (2 studies)"
    assert body_participants([review, trial], 2) == "at least 2,275 (2 studies)"
    assert body_participants([review, trial, other], 3) == "at least 2,745 (3 studies)"
    assert body_participants([review], 1) == "2,275 (1 study)"
