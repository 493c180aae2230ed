"""An extractive report: sentences quoted from the evidence, each citing the item it came from, strongest
study designs first, with an answer in brief that weighs the evidence by design and level.

It is the demo Report's algorithm and the code fallback when the Report agent fails, so a run
always ends in a readable, cited report built only from what was collected."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepcritical.outputs import Assessment, Finding, ResearchReport
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reading import entity_terms, is_relevant, key_terms, quote, sentences, stem
from deepcritical.stages.render import CITED_ID
from deepcritical.stages.strength import DIRECTIONS, Strength, strength_of

MAX_FINDINGS = 6
MAX_CONTRARY = 4
DIRECTION_WORDS = {"favourable": "favourable", "null": "null (no effect)", "unfavourable": "unfavourable"}
LEVEL_NAMES = {
    1: "systematic reviews",
    2: "randomised trials",
    3: "cohort or non-randomised studies",
    4: "case-control, cross-sectional or case studies",
    5: "expert reviews and commentary",
}


def _add(findings: list[Finding], statement: str, evidence_id: str) -> None:
    for finding in findings:
        if finding.statement == statement:
            finding.evidence_ids.append(evidence_id)
            return
    findings.append(Finding(statement=statement, evidence_ids=[evidence_id]))


def _see(ids: Sequence[str], quoted: set[str]) -> str:
    """A few quoted items' ids written bare, so rendering turns them into reference numbers; never a URL."""
    citable = [i for i in ids if i in quoted and CITED_ID.fullmatch(i)][:3]
    return f", see {', '.join(citable)}" if citable else ""


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _by_design(strength: Strength, quoted: set[str]) -> list[str]:
    """One sentence per design group that states results: "Randomised controlled trials (2): 1 favourable
    and 1 null (no effect), see pmid:…"."""
    sentences = []
    for label, cells in strength.rows:
        counts = [f"{len(cells[way])} {DIRECTION_WORDS[way]}" for way in DIRECTIONS if cells.get(way)]
        if not counts:
            continue
        stated = [i for way in DIRECTIONS for i in cells.get(way, [])]
        sentences.append(f"{label[0].upper()}{label[1:]} ({len(stated)}): {_and(counts)}{_see(stated, quoted)}.")
    return sentences


def _strongest(strength: Strength) -> str | None:
    if not strength.best_level:
        return None
    level = min(strength.best_level.values())
    ways = [way for way in DIRECTIONS if strength.best_level.get(way) == level]
    return (
        f"The strongest evidence found is at OCEBM level {level} ({LEVEL_NAMES[level]}), and it is "
        f"{' and '.join(DIRECTION_WORDS[way] for way in ways)}."
    )


def answer_brief(
    strength: Strength,
    quoted: set[str],
    assessment: Assessment | None,
    n_items: int,
    sources: Sequence[str],
    terms: Sequence[str],
    populations: Mapping[str, str] | None = None,
) -> str:
    """A hedged answer computed from how the quoted sentences read, weighed by study design and level, and
    from the judge's scores. Items that do not name the question's key terms never set its direction."""
    about = _and(list(terms)) if terms else "the question's terms"
    populations = populations or {}
    parts: list[str] = []
    if not strength.on_topic:
        parts.append(
            f"None of the {n_items} item(s) reviewed names enough of {about}, so this review gives no direction."
        )
    else:
        stated = sum(len(strength.ids(way)) for way in DIRECTIONS)
        parts.append(f"Weighing each item by its study design, the evidence reviewed {strength.lean}.")
        parts += _by_design(strength, quoted)
        if strongest := _strongest(strength):
            parts.append(strongest)
        if unclear := strength.on_topic - stated:
            parts.append(f"{unclear} item(s) state no clear favourable, null or unfavourable result.")
        favourable = strength.ids("favourable")
        if favourable and all(populations.get(i) in ("animals", "in_vitro") for i in favourable):
            parts.append("None of the favourable results comes from a study in humans.")
        if 0 < stated < 3:
            parts.append("So few items state a result that this is a weak indication at best.")
    if strength.off_topic and strength.on_topic:
        parts.append(f"{len(strength.off_topic)} item(s) that do not name enough of {about} were not counted.")
    if strength.registrations:
        parts.append(
            f"{len(strength.registrations)} trial registration(s) were found; a registration states plans, not "
            "results, so none is counted."
        )
    if strength.retracted:
        parts.append(f"{len(strength.retracted)} retracted publication(s) were set aside and support nothing here.")
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
        f"({', '.join(sources) or 'none'}): each result is a quoted sentence, weighed by study design and level "
        "(OCEBM 2011); risk of bias, precision and effect sizes were not appraised."
    )
    return " ".join(parts)


def _is_lab(item: EvidenceView) -> bool:
    return item.population in ("animals", "in_vitro")


def _rank(item: EvidenceView) -> tuple[int, int]:
    """Stronger designs first: human studies by level, then items outside the scale, animal and cell
    studies last among those."""
    preclinical = item.population in ("animals", "in_vitro")
    return (item.level if item.level is not None and not preclinical else 6, 1 if preclinical else 0)


def extractive_report(
    question: str,
    items: Sequence[EvidenceView],
    *,
    assessment: Assessment | None = None,
    notes: Sequence[str] = (),
) -> ResearchReport:
    """Quote the best result sentence of each relevant item, strongest designs first; contrary sentences go
    to their own list. Retracted items and trial registrations are never quoted as findings. Every on-topic
    item is counted for the answer in brief, also beyond the number quoted."""
    terms = key_terms(question)
    stems = [stem(term) for term in terms]
    usable = [item for item in items if not item.retracted and item.design != "registered_trial"]
    relevant = sorted([item for item in usable if is_relevant(item, stems)] or usable, key=_rank)
    findings: list[Finding] = []
    contrary: list[Finding] = []
    # Human studies come first, but one place is kept for the mechanism when animal or cell studies exist.
    lab_studies = any(_is_lab(item) for item in relevant)
    for item in relevant:
        found = quote(item, stems)
        if found is None:
            continue
        if found.contrary:
            if len(contrary) < MAX_CONTRARY:
                _add(contrary, found.sentence, item.id)
        elif len(findings) < (MAX_FINDINGS if _is_lab(item) or not lab_studies else MAX_FINDINGS - 1):
            _add(findings, found.sentence, item.id)
    if not findings and not contrary:  # nothing reads as a result: quote each item's opening instead
        for item in relevant[:3]:
            if opening := next(iter(sentences(item.text)), None):
                _add(findings, opening, item.id)
    sources = sorted({source for item in items for source in (item.found_by or [item.source])})
    cited = [i for finding in (*findings, *contrary) for i in finding.evidence_ids]
    limitations = [*(assessment.gaps if assessment else []), *notes]
    limitations.append(
        "The findings are sentences quoted from abstracts, registry entries and snippets, strongest study designs "
        "first; each item's design and level come from its publication types, MeSH headings or text (shown in the "
        "references), and risk of bias was not appraised."
    )
    strength = strength_of(question, items)
    return ResearchReport(
        question=question,
        answer_brief=answer_brief(
            strength,
            set(cited),
            assessment,
            len(items),
            sources,
            [terms[stems.index(entity)] for entity in entity_terms(stems)],
            {i.id: i.population for i in items},
        ),
        key_findings=findings,
        contrary_evidence=contrary,
        limitations=limitations,
        references=list(dict.fromkeys(cited)),
    )
