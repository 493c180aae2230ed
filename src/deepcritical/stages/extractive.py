"""An extractive report: sentences quoted from the evidence, each citing the item it came from.

It is the demo Report's algorithm and the code fallback when the Report agent fails, so a run
always ends in a readable, cited report built only from what was collected."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deepcritical.outputs import Assessment, Finding, ResearchReport
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reading import (
    SUPPORTIVE,
    aspects_of,
    informative,
    is_relevant,
    key_terms,
    quote,
    sentences,
    stem,
)
from deepcritical.stages.render import CITED_ID

MAX_FINDINGS = 6
MAX_CONTRARY = 4


def _add(findings: list[Finding], statement: str, evidence_id: str) -> None:
    for finding in findings:
        if finding.statement == statement:
            finding.evidence_ids.append(evidence_id)
            return
    findings.append(Finding(statement=statement, evidence_ids=[evidence_id]))


@dataclass
class _Tally:
    """How the relevant items read, by the wording of the sentence quoted from each."""

    favourable: dict[str, list[str]] = field(default_factory=lambda: {"humans": [], "lab": [], "other": []})
    contrary: list[str] = field(default_factory=list)
    neutral: list[str] = field(default_factory=list)  # a result, but neither favourable nor unfavourable wording

    def add_favourable(self, item: EvidenceView, sentence: str) -> None:
        # The quoted sentence says what kind of study found the result when it can; else the whole item does.
        for text in (sentence, informative(f"{item.title}. {item.text}")):
            aspects = aspects_of(text)
            if "clinical" in aspects or "mechanism" in aspects:
                self.favourable["humans" if "clinical" in aspects else "lab"].append(item.id)
                return
        self.favourable["other"].append(item.id)

    @property
    def n_favourable(self) -> int:
        return sum(len(ids) for ids in self.favourable.values())


def _lean(favourable: int, contrary: int) -> str:
    if not favourable and not contrary:
        return "does not settle the question"
    if contrary == 0 or favourable >= 2 * contrary:
        return "leans favourable"
    if favourable == 0 or contrary >= 2 * favourable:
        return "leans against"
    return "is mixed"


def _see(ids: Sequence[str], quoted: set[str]) -> str:
    """A few quoted items' ids written bare, so rendering turns them into reference numbers; never a URL."""
    citable = [i for i in ids if i in quoted and CITED_ID.fullmatch(i)][:3]
    return f", see {', '.join(citable)}" if citable else ""


def answer_brief(
    tally: _Tally, quoted: set[str], assessment: Assessment | None, n_items: int, sources: Sequence[str]
) -> str:
    """A hedged answer computed from how the quoted sentences read and from the judge's scores."""
    favourable, contrary = tally.n_favourable, len(tally.contrary)
    kinds = [
        f"{len(ids)} {label}"
        for label, ids in (
            ("in humans", tally.favourable["humans"]),
            ("mechanistic or animal", tally.favourable["lab"]),
            ("of other kinds", tally.favourable["other"]),
        )
        if ids
    ]
    favourable_ids = [i for ids in tally.favourable.values() for i in ids]
    if favourable or contrary:
        opening = (
            f"The collected evidence {_lean(favourable, contrary)}: {favourable} item(s) report favourable results"
            + (f" ({', '.join(kinds)})" if kinds else "")
            + _see(favourable_ids, quoted)
            + f", and {contrary} report null, negative or unfavourable results{_see(tally.contrary, quoted)}."
        )
    else:
        opening = (
            f"The collected evidence {_lean(0, 0)}: none of the {n_items} relevant item(s) states a clearly "
            "favourable or unfavourable result."
        )
    parts = [opening]
    if tally.neutral:
        parts.append(f"{len(tally.neutral)} item(s) report results that read as neither favourable nor unfavourable.")
    if favourable and not tally.favourable["humans"]:
        parts.append("None of the favourable results comes from a study in humans.")
    if 0 < favourable + contrary < 3:
        parts.append("So few items state a result that this is a weak indication at best.")
    if assessment is not None:
        scores = assessment.scores
        verdict = "sufficient" if assessment.sufficient else "not yet sufficient"
        parts.append(
            f"The judge rated mechanism {scores['mechanism']}/10, clinical evidence {scores['clinical']}/10 and "
            f"safety {scores['safety']}/10 and found the evidence {verdict}, confidence {assessment.confidence:.2f}."
        )
    else:
        parts.append("The judge did not rate this evidence, so its confidence is unknown.")
    parts.append(
        f"This is an extractive summary of {n_items} evidence item(s) from {len(sources)} source(s) "
        f"({', '.join(sources) or 'none'}): sentences are quoted and counted, not weighed for study quality or size."
    )
    return " ".join(parts)


def extractive_report(
    question: str,
    items: Sequence[EvidenceView],
    *,
    assessment: Assessment | None = None,
    notes: Sequence[str] = (),
) -> ResearchReport:
    """Quote the best result sentence of each relevant item; contrary sentences go to their own list.
    Every relevant item is counted for the answer in brief, also beyond the number quoted."""
    stems = [stem(term) for term in key_terms(question)]
    relevant = [item for item in items if is_relevant(item, stems)] or list(items)
    findings: list[Finding] = []
    contrary: list[Finding] = []
    tally = _Tally()
    for item in relevant:
        found = quote(item, stems)
        if found is None:
            continue
        if found.contrary:
            tally.contrary.append(item.id)
            if len(contrary) < MAX_CONTRARY:
                _add(contrary, found.sentence, item.id)
            continue
        if SUPPORTIVE.search(found.sentence):
            tally.add_favourable(item, found.sentence)
        else:
            tally.neutral.append(item.id)
        if len(findings) < MAX_FINDINGS:
            _add(findings, found.sentence, item.id)
    if not findings and not contrary:  # nothing reads as a result: quote each item's opening instead
        for item in relevant[:3]:
            if opening := next(iter(sentences(item.text)), None):
                _add(findings, opening, item.id)
    sources = sorted({source for item in relevant for source in (item.found_by or [item.source])})
    cited = [i for finding in (*findings, *contrary) for i in finding.evidence_ids]
    limitations = [*(assessment.gaps if assessment else []), *notes]
    limitations.append(
        "The findings are sentences quoted from abstracts and snippets; study quality and size were not weighed."
    )
    return ResearchReport(
        question=question,
        answer_brief=answer_brief(tally, set(cited), assessment, len(relevant), sources),
        key_findings=findings,
        contrary_evidence=contrary,
        limitations=limitations,
        references=list(dict.fromkeys(cited)),
    )
