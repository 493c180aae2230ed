"""An extractive report: sentences quoted from the evidence, each citing the item it came from.

It is the demo Report's algorithm and the code fallback when the Report agent fails, so a run
always ends in a readable, cited report built only from what was collected."""

from __future__ import annotations

import re
from collections.abc import Sequence

from deepcritical.agents.framing import EvidenceView
from deepcritical.agents.heuristics import INSTRUCTION, is_relevant, key_terms, reads_contrary, stem
from deepcritical.agents.outputs import Assessment, Finding, ResearchReport

MAX_FINDINGS = 6
MAX_CONTRARY = 4
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
_LABEL = re.compile(
    r"^(?:[A-Z][A-Z /&]{2,40}|Background|Objectives?|Aims?|Purpose|Methods?|Design|Setting|Results?|Findings"
    r"|Conclusions?|Interpretation|Discussion|Significance):\s+"
)
_RESULT = re.compile(
    r"\b(?:conclu\w*|result\w*|suggest\w*|show\w*|found|find\w*|associated|reduc\w*|improv\w*|increas\w*"
    r"|decreas\w*|lower\w*|higher|demonstrat\w*|indicat\w*|significant\w*|protect\w*|benefit\w*)\b",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """Sentences of an abstract or snippet that report something: section labels such as "RESULTS:"
    removed, and sentences that read as instructions (to a reader or a model) left out."""
    parts = []
    for raw in _SPLIT.split(" ".join(text.split())):
        sentence = _LABEL.sub("", raw).strip()
        if 30 <= len(sentence) <= 500 and not sentence.endswith("…") and not INSTRUCTION.search(sentence):
            parts.append(sentence)
    return parts


def _rank(sentence: str, stems: Sequence[str]) -> int:
    lowered = sentence.lower()
    return 2 * bool(_RESULT.search(sentence)) + sum(term in lowered for term in stems)


def best_sentence(item: EvidenceView, stems: Sequence[str], *, contrary: bool) -> str | None:
    """The sentence that best states a result about the question (a contrary one when asked)."""
    candidates = [s for s in sentences(item.text) if reads_contrary(s) == contrary]
    if not candidates:
        return None
    ranked = sorted(enumerate(candidates), key=lambda pair: (-_rank(pair[1], stems), -pair[0]))
    best = ranked[0][1]
    return best if _rank(best, stems) >= 2 else None


def _add(findings: list[Finding], statement: str, evidence_id: str) -> None:
    for finding in findings:
        if finding.statement == statement:
            finding.evidence_ids.append(evidence_id)
            return
    findings.append(Finding(statement=statement, evidence_ids=[evidence_id]))


def extractive_report(
    question: str,
    items: Sequence[EvidenceView],
    *,
    assessment: Assessment | None = None,
    notes: Sequence[str] = (),
) -> ResearchReport:
    """Quote the best result sentence of each relevant item; contrary sentences go to their own list."""
    stems = [stem(term) for term in key_terms(question)]
    relevant = [item for item in items if is_relevant(item, stems)] or list(items)
    findings: list[Finding] = []
    contrary: list[Finding] = []
    for item in relevant:
        against = best_sentence(item, stems, contrary=True)
        if against and len(contrary) < MAX_CONTRARY:
            _add(contrary, against, item.id)
        elif (supporting := best_sentence(item, stems, contrary=False)) and len(findings) < MAX_FINDINGS:
            _add(findings, supporting, item.id)
    if not findings and not contrary:  # nothing reads as a result: quote each item's opening instead
        for item in relevant[:3]:
            if opening := next(iter(sentences(item.text)), None):
                _add(findings, opening, item.id)
    sources = sorted({source for item in relevant for source in (item.found_by or [item.source])})
    brief = (
        f"An extractive summary of {len(relevant)} evidence item(s) from {len(sources)} source(s) "
        f"({', '.join(sources) or 'none'}): {len(findings)} quoted finding(s) report results bearing on the "
        f"question and {len(contrary)} report null, negative or unfavourable results."
    )
    if assessment is not None:
        scores = assessment.scores
        brief += (
            f" The judge rated mechanism {scores['mechanism']}/10, clinical evidence {scores['clinical']}/10 "
            f"and safety {scores['safety']}/10, with confidence {assessment.confidence:.2f}."
        )
    limitations = [*(assessment.gaps if assessment else []), *notes]
    limitations.append(
        "The findings are sentences quoted from abstracts and snippets; study quality and size were not weighed."
    )
    cited = [i for finding in (*findings, *contrary) for i in finding.evidence_ids]
    return ResearchReport(
        question=question,
        answer_brief=brief,
        key_findings=findings,
        contrary_evidence=contrary,
        limitations=limitations,
        references=list(dict.fromkeys(cited)),
    )
