"""An extractive report: sentences quoted from the evidence, each citing the item it came from, strongest
study designs first, with an answer in brief that weighs the evidence by design and level.

It is the demo Report's algorithm and the code fallback when the Report agent fails, so a run
always ends in a readable, cited report built only from what was collected.

Where a counted study is quoted follows the strength table (``appraisal.strength``), the owner of each study's
reading: one the table reads favourable is a key finding, one it reads null or unfavourable is contrary
evidence, and one it reads as no clear result is not quoted at all (the table still lists it). The sentence
quoted is the study's conclusion when its own wording agrees with that reading, else the sentence the reading
rests on, so a finding never says the opposite of its row. A question with no outcome of its own ("repurposed
for Alzheimer's disease") is not filtered by outcome (any clinical result of a study of its people may be
quoted), but its studies are placed by the table like any other's. Only when nothing is counted are the items
that name the question's first term quoted by their own wording."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deepcritical.appraisal.directness import naming_the_intervention
from deepcritical.appraisal.framing import EvidenceView, no_result_section
from deepcritical.appraisal.passages import NOT_A_RESULT, Quote, is_relevant, is_title, quote, result_only, sentences
from deepcritical.appraisal.question_comparison import asks_direction
from deepcritical.appraisal.strength import DIRECTIONS, Strength, is_lab, strength_of
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import COUNTED_METHOD, Weighed, counted_verdict, weighed_readings
from deepcritical.models import DESIGN_LABELS, Evidence
from deepcritical.outputs import Assessment, Finding, ResearchReport, Verdict
from deepcritical.questions import entity_terms, key_terms, stem
from deepcritical.report.citations import verify_citations
from deepcritical.text import quantity
from deepcritical.vocabulary import DIRECTION_WORDS, REVIEW_DESIGNS, TRIAL_DESIGNS

MAX_FINDINGS = 6
MAX_CONTRARY = 4
LEVEL_NAMES = {
    1: "systematic reviews",
    2: "randomised trials",
    3: "cohort or non-randomised studies",
    4: "case-control, cross-sectional or case studies",
    5: "expert reviews and commentary",
}


def _add(findings: list[Finding], statement: str, *evidence_ids: str) -> None:
    for finding in findings:
        if finding.statement == statement:
            finding.evidence_ids.extend(i for i in evidence_ids if i not in finding.evidence_ids)
            return
    findings.append(Finding(statement=statement, evidence_ids=list(evidence_ids)))


def _and(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _ids(ids: Sequence[str]) -> str:
    """Ids written bare, in brackets, so rendering turns them into one group of reference numbers."""
    return f"({', '.join(ids)})"


def _directions(strength: Strength, ids: Sequence[str]) -> str:
    """'1 favourable and 1 null (no effect)', '1 with a result for another outcome only', '1 with no clear
    result'."""
    ways = [strength.directions.get(i) for i in ids]
    counts = [f"{ways.count(way)} {DIRECTION_WORDS[way]}" for way in DIRECTIONS if way in ways]
    unread = [i for i in ids if strength.directions.get(i) is None]
    if elsewhere := sum(i in strength.on_another_outcome for i in unread):
        counts.append(f"{elsewhere} with a result for another outcome only")
    if unclear := len(unread) - elsewhere:
        counts.append(f"{unclear} with no clear result")
    return _and(counts)


def _strongest(strength: Strength) -> str:
    """What the strongest studies in people found, citing every one of them."""
    best = strength.strongest()
    if not best:
        return "No counted study in people is graded on the OCEBM scale."
    level = best[0].level or 0
    designs = list(dict.fromkeys(DESIGN_LABELS.get(view.design, view.design) for view in best))  # type: ignore[call-overload]
    sizes = [f"{view.n:,}" for view in best if view.n is not None]
    size = f", n = {_and(sizes)}" if sizes else ""
    ids = [view.id for view in best]
    found = _directions(strength, ids)
    studies = "1 study" if len(best) == 1 else f"{len(best)} studies"
    return (
        f"The strongest evidence in people is at OCEBM level {level} ({LEVEL_NAMES.get(level, 'other')}): "
        f"{studies} ({_and(designs)}{size}) {_ids(ids)}, {found}."
    )


# How the brief says the answer the weighed readings give: the verdict's own label, in words.
_LEANS = {
    "yes": "leans favourable",
    "supported": "leans favourable",
    "no": "leans against",
    "refuted": "leans against",
    "maybe": "is mixed",
    "mixed": "is mixed",
}


def weighing_sentence(question: str, strength: Strength, verdict: Verdict) -> str:
    """What the verdict weighed, said in the brief: the counted studies it weighs (studies only: web pages
    and commentary are not counted) by the direction of their result, and the answer it gives."""
    if verdict.label == "open":
        return ""
    if verdict.label == "insufficient":
        return verdict.rationale
    weighed = weighed_readings(question, strength)
    if verdict.certainty is not None and asks_direction(question):
        # A review's answer (``appraisal.review_verdict``) says itself what it weighed: the direct studies.
        leans = "Weighing the direct studies' readings by design level, size and directness, the evidence"
        rests = f"{leans} {_LEANS[verdict.label]} {_ids(verdict.evidence_ids)}."
        return f"{rests} {verdict.rationale}{_unweighed(strength, weighed)}"
    if verdict.method != strength.reader_for(question).named_in(COUNTED_METHOD) or not weighed:
        stated = strength.stated
        if not stated:
            return "None of the counted studies states a clear favourable, null or unfavourable result."
        # The verdict is then the stance model's, read from the studies' whole text: the brief states no lean
        # of its own beside it.
        return (
            f"{quantity(len(stated), 'counted study', 'counted studies')} {'states' if len(stated) == 1 else 'state'} "
            f"a result ({_directions(strength, stated)}) {_ids(stated)}; "
            "the verdict does not weigh them but reads their text whole (fewer than two state a result directly on "
            "the question's comparison, or the question is not about an effect)."
        )
    counts = _and([f"{sum(w.way == way for w in weighed)} {way}" for way in DIRECTIONS])
    sentence = (
        f"Weighing the {quantity(len(weighed), 'counted study', 'counted studies')} that "
        f"{'states' if len(weighed) == 1 else 'state'} a result ({counts}) by design level, size and "
        f"directness, the evidence {_LEANS[verdict.label]} {_ids([w.view.id for w in weighed])}."
    )
    return sentence + _unweighed(strength, weighed)


def _unweighed(strength: Strength, weighed: Sequence[Weighed]) -> str:
    """The counted line below says how many state a result; those the verdict gives no weight are named, so
    that the two counts do not read as a contradiction."""
    weighed_ids = {w.view.id for w in weighed}
    unweighed = [i for i in strength.stated if i not in weighed_ids]
    if not unweighed:
        return ""
    return (
        f" {quantity(len(unweighed), 'other counted item')} that "
        f"{'states a result carries' if len(unweighed) == 1 else 'state a result carry'} no weight (narrative "
        "reviews, editorials or letters, or items of unknown design: no study of their own) "
        f"{_ids(unweighed)}."
    )


def answer_brief(strength: Strength, terms: Sequence[str], question: str, verdict: Verdict | None = None) -> str:
    """A short answer from the counted studies: what the strongest studies in people found, what the verdict
    weighed and the answer it gives (``verdict``: the run's; else the one these counted studies give), and
    the caveats a reader must not miss. Every count cites its items; the totals of what was reviewed and set
    aside are added by the renderer, from the same set."""
    about = _and(list(terms)) if terms else "the question's terms"
    if not strength.counted:
        pages = (
            f" ({quantity(len(strength.not_studies), 'web page')} or commentary "
            f"{'does' if len(strength.not_studies) == 1 else 'do'}, which are not studies)"
            if strength.not_studies
            else ""
        )
        return (
            f"None of the {quantity(strength.reviewed, 'item')} reviewed is a study that names enough of "
            f"{about}{pages}, "
            "so this review gives no answer."
        )
    verdict = verdict or counted_verdict(question, strength, list(strength.views.values()))
    stated = strength.stated
    parts = [_strongest(strength)]
    if weighing := weighing_sentence(question, strength, verdict):
        parts.append(weighing)
    favourable = strength.ids("favourable")
    if favourable and all(is_lab(strength.views[i]) for i in favourable):
        parts.append("None of the favourable results comes from a study in people.")
    if not strength.has_design(TRIAL_DESIGNS | REVIEW_DESIGNS):
        parts.append("No randomised controlled trial or systematic review in people was found.")
    if 0 < len(stated) < 3:
        parts.append("So few studies state a result that this is a weak indication at best.")
    return " ".join(parts)


def code_brief(question: str, strength: Strength, verdict: Verdict | None = None) -> str:
    """The brief of a report written in code, from the counted set ``strength`` and the run's ``verdict``."""
    terms = key_terms(question)
    stems = [stem(term) for term in terms]
    return answer_brief(strength, [terms[stems.index(entity)] for entity in entity_terms(stems)], question, verdict)


def _rank(item: EvidenceView) -> tuple[int, int, int]:
    """Stronger designs first: human studies by level, then items outside the scale, animal and cell
    studies last among those; within a tier, a study before a web page that reports one."""
    level = item.level if item.level is not None and not is_lab(item) else 6
    return (level, 1 if is_lab(item) else 0, 1 if item.design in ("web", "unknown") else 0)


# A full-text passage's title ends in its section, "(Methods)": the library source names passages so.
_PASSAGE_SECTION = re.compile(r"\(([^()]{1,80})\)\s*$")


def _passage_without_results(item: EvidenceView) -> bool:
    """A passage of a paper's introduction or methods: background or a plan, never quoted as a finding."""
    if item.source != "library":
        return False
    section = _PASSAGE_SECTION.search(item.title)
    return section is not None and no_result_section(section.group(1))


def passage_result(item: EvidenceView, reader: StudyReader) -> Quote | None:
    """A full-text passage's finding: the sentence the result reader relied on for the question's outcome
    and intervention (a Results passage has no conclusions to quote, and its first contrary-sounding
    sentence may be a funnel plot's), contrary when null or unfavourable; None when it states none."""
    reading = reader.read(item)
    sentence = result_only(reading.sentence) if reading.direct and reading.sentence else None
    if sentence is None or NOT_A_RESULT.search(sentence):
        return None
    return Quote(sentence, contrary=reading.direction != "favourable")


def _on_outcome(item: EvidenceView, reader: StudyReader) -> Quote | None:
    """The study's own result for the question's outcome, as the result reader read it, when the sentence
    chosen to quote is about another outcome ("reduced progression to severe sepsis" in a trial whose
    mortality "was similar"); None when the study states none for it (it is read for another outcome)."""
    reading = reader.read(item)
    if reading.direction is None or reading.sentence is None:
        return None
    sentence = result_only(reading.sentence)
    if sentence is None or NOT_A_RESULT.search(sentence):
        return None
    return Quote(sentence, contrary=reading.direction != "favourable")


def _as_read(found: Quote, item: EvidenceView, reader: StudyReader, strength: Strength) -> Quote | None:
    """``found`` placed as the table reads the study (contrary unless favourable). When its own wording says
    the other way ("These findings do not support ..." read as favourable by its cues, a null row), the
    sentence the reading rests on is quoted instead; when that one is no quotable result, nothing is: a
    sentence saying the opposite of its row is never quoted."""
    contrary = strength.directions.get(item.id) != "favourable"
    if found.contrary == contrary:
        return found
    reading = reader.read(item)
    sentence = result_only(reading.sentence) if reading.sentence else None
    if sentence is not None and not NOT_A_RESULT.search(sentence):
        return Quote(sentence, contrary)
    return None


def _named_uncounted(question: str, usable: Sequence[EvidenceView], strength: Strength) -> list[EvidenceView]:
    """With nothing counted, the items that name the question's first term or most of its terms, and of them
    only those naming its intervention: a colchicine question quotes no empagliflozin trial, not even as
    contrary evidence."""
    stems = [stem(term) for term in key_terms(question)]
    named = [item for item in usable if is_relevant(item, stems)]
    return naming_the_intervention(named, strength.reader_for(question))


def extractive_report(
    question: str,
    items: Sequence[EvidenceView],
    *,
    assessment: Assessment | None = None,
    notes: Sequence[str] = (),
    strength: Strength | None = None,
    reader: StudyReader | None = None,
) -> ResearchReport:
    """Quote the best result sentence of each counted item (``strength_of``: on the question's topic, not
    retracted, not a registration), strongest designs first; contrary sentences go to their own list.
    Only when no item is on topic are the items that name the question's terms and its intervention quoted
    (the brief then says that none was counted). Advice is never quoted as a finding. ``strength``: the
    counted set of ``items`` when the caller has it (the run's, read over the same views), else counted here."""
    terms = key_terms(question)
    stems = [stem(term) for term in terms]
    strength = strength or strength_of(question, items, reader)
    usable = [item for item in items if not item.retracted and item.design != "registered_trial"]
    counted = [strength.views[i] for i in strength.counted]
    relevant = sorted(counted or _named_uncounted(question, usable, strength), key=_rank)
    findings: list[Finding] = []
    contrary: list[Finding] = []
    # Human studies come first, but one place is kept for the mechanism when animal or cell studies exist.
    lab_studies = any(is_lab(item) for item in relevant)
    abstracts = {item.document: item.id for item in items if item.section is None and item.document}
    reader = strength.reader_for(question)
    other_outcome: set[str] = set()
    for item in relevant:
        if _passage_without_results(item):
            continue
        if counted and strength.directions.get(item.id) is None:
            continue  # the table reads no clear result: neither a finding nor contrary evidence
        found = passage_result(item, reader) if item.section else None
        found = found or quote(item, stems)
        if found is not None and reader.asks_outcome and not reader.on_outcome(found.sentence, item):
            found = _on_outcome(item, reader)
            if found is None:  # a depression trial on a fractures question: "no clear result", never a finding
                other_outcome.add(item.id)
        if found is not None and counted:
            found = _as_read(found, item, reader, strength)
        if found is None:
            continue
        # A passage's finding cites its study's abstract beside it: one reference, the passage under it.
        ids = (item.id, abstracts[item.document]) if item.section and item.document in abstracts else (item.id,)
        if found.contrary:
            if len(contrary) < MAX_CONTRARY:
                _add(contrary, found.sentence, *ids)
        elif len(findings) < (MAX_FINDINGS if is_lab(item) or not lab_studies else MAX_FINDINGS - 1):
            _add(findings, found.sentence, *ids)
    if not counted and not findings and not contrary:  # nothing reads as a result: quote each item's opening
        for item in [item for item in relevant if item.id not in other_outcome][:3]:
            openings = (kept for s in sentences(item.text) if not is_title(s, item.title) and (kept := result_only(s)))
            opening = next(openings, None)
            # As the citation check reads a finding: an opening off the question's outcome, from a study read
            # for another outcome (a sepsis guideline on a dementia question), is no finding on the question.
            if opening and not (
                reader.asks_outcome
                and not reader.on_outcome(opening, item)
                and reader.read(item).other_outcome is not None
            ):
                _add(findings, opening, item.id)
    sources = sorted({source for item in items for source in (item.found_by or [item.source])})
    cited = [i for finding in (*findings, *contrary) for i in finding.evidence_ids]
    limitations = [*(assessment.gaps if assessment else []), *notes]
    limitations.append(
        f"This is an extractive summary of {quantity(len(items), 'evidence item')} from "
        f"{quantity(len(sources), 'source')} "
        f"({', '.join(sources) or 'none'}): the findings are sentences quoted from abstracts, registry entries and "
        "snippets, strongest study designs first; each item's design and level come from its publication types, "
        "MeSH headings or text (shown in the references); risk of bias and imprecision are judged in code from what "
        "the texts state (the GRADE reasons under the summary of findings), not by a reviewer."
    )
    return ResearchReport(
        question=question,
        answer_brief=code_brief(question, strength),
        key_findings=findings,
        contrary_evidence=contrary,
        limitations=limitations,
        references=list(dict.fromkeys(cited)),
    )


def code_findings(
    question: str, report: ResearchReport, counted: Strength, collected: Mapping[str, Evidence]
) -> ResearchReport:
    """A report written in code (the demo's, the fallback's) with its findings quoted again from the run's
    counted set ``counted``, over the text its table read (the draft read a slice of each item), and checked
    against the collected evidence as every report is."""
    draft = extractive_report(question, list(counted.views.values()), strength=counted, reader=counted.reader)
    checked, _ = verify_citations(draft, collected, question=question, reader=counted.reader_for(question))
    return report.model_copy(
        update={"key_findings": checked.key_findings, "contrary_evidence": checked.contrary_evidence}
    )
