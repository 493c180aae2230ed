"""The demo's own questions, whose synthetic meta-analyses and trials state each answer plainly: the code
verdict states the answer the counted studies give, rests only on counted studies, and lists no study twice;
a question outside the corpus is insufficient (issue 23's regressions, on the real loop)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deepcritical.config import load_settings
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.setup import assemble, http_client


async def research(question: str, home: Path) -> ResearchOutcome:
    settings = load_settings(demo_mode=True, home=home)
    async with http_client(settings) as client:
        return await Orchestrator(assemble(settings, client)).research(question)


@pytest.mark.parametrize(
    ("question", "answer", "resting_on"),
    [
        # The level-1 meta-analysis and the phase-3 trial are null; only cohorts favour statins.
        ("Do statins reduce mortality in sepsis?", "no", {"pmid:99000305", "pmid:99000304"}),
        # The meta-analysis (HR 0.77) and the reduced-ejection-fraction trial (HR 0.74) are positive.
        ("Do SGLT2 inhibitors improve outcomes in heart failure?", "yes", {"pmid:99000403", "pmid:99000401"}),
        # A meta-analysis of treatment in depression against null prevention trials: no clear answer.
        ("Does vitamin D supplementation prevent or treat depression?", "maybe", {"pmid:99000504", "pmid:99000503"}),
        ("Can metformin be repurposed for Alzheimer's disease?", "maybe", set()),
        # Not a demo topic: the vitamin D trials it finds report depression, never fractures.
        ("Does vitamin D supplementation prevent fractures in older adults?", "insufficient", set()),
    ],
)
async def test_each_demo_topic_gets_the_answer_its_corpus_states(
    tmp_path: Path, question: str, answer: str, resting_on: set[str]
) -> None:
    outcome = await research(question, tmp_path / "home")
    verdict = outcome.verdict
    assert verdict is not None
    assert verdict.label == answer
    assert resting_on <= set(verdict.evidence_ids)
    # It rests only on studies of the strength table (whose cells cite them by reference number).
    table = outcome.markdown.split("## Strength of evidence", 1)[1].split("\n## ", 1)[0]
    for evidence_id in verdict.evidence_ids:
        reference = next(
            line.split(".", 1)[0]
            for line in outcome.markdown.split("## References", 1)[1].splitlines()
            if f"Evidence id: `{evidence_id}`" in line
        )
        assert re.search(rf"[\[ ]{reference}(?:\\\]|,)", table), evidence_id
    assert "## Verdict" in outcome.markdown
    # Each study is one reference: no PMID stands under two reference numbers.
    references = outcome.markdown.split("## References", 1)[1]
    pmids = [
        line.split("Evidence id: `")[1].split("`")[0] for line in references.splitlines() if "Evidence id: `" in line
    ]
    assert len(pmids) == len(set(pmids))
