"""The report's sections written in code: findings with their citations, the retraction and concern
warnings, the strength-of-evidence table and its counted line, the judge's capped scores and the verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepcritical.appraisal.strength import DIRECTIONS, Strength
from deepcritical.appraisal.studies import group_studies
from deepcritical.appraisal.study_reading import TRANSFORMER_WORDS
from deepcritical.models import Evidence
from deepcritical.outputs import Assessment, Finding, ResearchReport, Verdict
from deepcritical.report.document import (
    Block,
    Cite,
    Inline,
    Item,
    Link,
    Quote,
    Table,
    bullets,
    cites,
    em,
    heading,
    item,
    paragraph,
    runs,
    strong,
)
from deepcritical.report.markdown import ModelText, safe_link
from deepcritical.report.references import best_grade, citation_ref
from deepcritical.text import quantity


def findings_list(
    findings: Sequence[Finding],
    numbers: Mapping[str, int],
    text: ModelText,
    empty: str,
    evidence: Mapping[str, Evidence],
    indirect: Mapping[str, str] | None = None,
) -> list[Block]:
    """Each finding with its citations and its best design; a finding that cites a study the verdict counts
    as indirect (``Strength.indirect``: its people are not the question's) says so beside the design, as the
    forest plot that leaves the study out does: "(randomised controlled trial, humans, n = 6,522; indirect:
    people without heart failure)"."""
    if not findings:
        return [paragraph(empty)]
    # By reference number: a finding may cite a study's passage where the table counts its abstract.
    why_by_number = {numbers[i]: why for i, why in (indirect or {}).items() if i in numbers}
    lines = []
    for finding in findings:
        marks = list(
            dict.fromkeys(
                citation_ref(numbers[i], evidence.get(i)) for i in dict.fromkeys(finding.evidence_ids) if i in numbers
            )
        )
        # A passage and its study's abstract share one reference: "[1, Results]" says both, "[1, Results; 1]"
        # said the study twice.
        placed = {mark.number for mark in marks if mark.place}
        marks = [mark for mark in marks if mark.place or mark.number not in placed]
        grade = best_grade(finding.evidence_ids, evidence)
        notes: list[list[Inline]] = [runs(grade.label)] if grade is not None and grade.basis is not None else []
        notes += _indirect_notes([mark.number for mark in marks], why_by_number)
        joined = [part for at, note in enumerate(notes) for part in (runs("; ") if at else []) + note]
        shown = runs(" ", em("(", joined, ")")) if notes else []
        said = f' "{finding.quote}"' if finding.quote else ""
        cited = runs(" ", Cite(refs=marks, separator="; ")) if marks else []
        lines.append(item(text(finding.statement), said, *cited, *shown))
    return [bullets(lines)]


# A definite answer, and whether it is the intervention's effect (a "yes") or its absence (a "no").
AFFIRMING = {"yes": True, "supported": True, "no": False, "refuted": False}


def findings_for_the_answer(
    report: ResearchReport, verdict: Verdict | None, evidence: Mapping[str, Evidence]
) -> ResearchReport:
    """The findings ordered by the answer: "Key findings" lead with what the verdict rests on (its strongest
    study first) and "Contrary evidence" holds what reads against it. A report's findings are written for and
    against the intervention's effect, so under a "No" the trials the No rests on were filed as contrary
    evidence and favourable cohorts led the findings. A finding citing any study the verdict rests on is a key
    finding; one citing only studies that read the other way is contrary; any other keeps its side, swapped
    under a "no" or "refuted". The references follow the new order (one numbering, first cited first). A
    verdict without a definite answer (maybe, mixed, insufficient, open) leaves the report as it is."""
    if verdict is None or verdict.label not in AFFIRMING:
        return report
    study_of = {item.id: at for at, study in enumerate(group_studies(evidence.values())) for item in study}

    def studies(ids: Sequence[str]) -> set[int | str]:
        return {study_of.get(i, i) for i in ids}

    rank = {study: at for at, study in reversed(list(enumerate(study_of.get(i, i) for i in verdict.evidence_ids)))}
    resting, against = studies(verdict.evidence_ids), studies(verdict.against_ids)
    agreeing, opposing = (
        (report.key_findings, report.contrary_evidence)
        if AFFIRMING[verdict.label]
        else (report.contrary_evidence, report.key_findings)
    )
    every = [*agreeing, *opposing]
    leading = sorted(
        (finding for finding in every if studies(finding.evidence_ids) & resting),
        key=lambda finding: min(rank[study] for study in studies(finding.evidence_ids) & resting),
    )
    contrary = [f for f in every if f not in leading and studies(f.evidence_ids) & against]
    placed = [*leading, *contrary]
    key = [*leading, *(f for f in agreeing if f not in placed)]
    contrary += [f for f in opposing if f not in placed]
    cited = [i for finding in (*key, *contrary) for i in finding.evidence_ids]
    references = list(dict.fromkeys([*cited, *report.references]))
    return report.model_copy(update={"key_findings": key, "contrary_evidence": contrary, "references": references})


def _indirect_notes(cited: Sequence[int], why_by_number: Mapping[int, str]) -> list[list[Inline]]:
    """ "indirect: people without heart failure" when every study cited is indirect; else "[3] indirect: ..."
    for each one that is."""
    shown = list(dict.fromkeys(cited))
    indirect = [number for number in shown if number in why_by_number]
    if not indirect:
        return []
    if len(indirect) == len(shown):
        return [runs(f"indirect: {'; '.join(dict.fromkeys(why_by_number[number] for number in indirect))}")]
    return [runs(cites([number]), f" indirect: {why_by_number[number]}") for number in indirect]


def _flagged_item(flag: str, item_: Evidence, numbers: Mapping[str, int], demo: bool) -> Item:
    link = None if demo else safe_link(item_.citation.url)  # a synthetic record has no page
    where = runs(" ", Link(text="Link", url=link)) if link else []
    number = runs(", reference ", cites([numbers[item_.id]])) if item_.id in numbers else []
    return item(strong(flag), f" {item_.citation.title.rstrip('. ')} ({item_.citation.date})", *number, ".", *where)


def flagged(counted: Strength, report: ResearchReport, evidence: Mapping[str, Evidence]) -> tuple[list[str], list[str]]:
    """The retracted items and those under an expression of concern that are on the question's topic (among
    the items reviewed), and any the report cites: a flag on an unrelated paper is noise, not a warning."""
    cited = [i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids]
    retracted = [i for i in counted.retracted if i in evidence]
    concern = [i for i in dict.fromkeys([*counted.concern, *cited]) if i in evidence]
    return retracted, [i for i in concern if evidence[i].expression_of_concern and not evidence[i].retracted]


def flag_warnings(
    retracted: Sequence[str],
    concern: Sequence[str],
    evidence: Mapping[str, Evidence],
    numbers: Mapping[str, int],
    demo: bool = False,
) -> list[Block]:
    """A visible warning listing the on-topic retracted items (they support no finding), and the items under
    an expression of concern."""
    lines: list[Block] = []
    if retracted:
        lines += [
            Quote(
                blocks=[
                    paragraph(
                        strong(f"Warning: {quantity(len(retracted), 'retracted publication')} on this question."),
                        " A retracted publication supports no finding in this report; it is listed here so that it "
                        "is not mistaken for evidence:",
                    ),
                    bullets([_flagged_item("Retracted:", evidence[i], numbers, demo) for i in retracted]),
                ]
            )
        ]
    if concern:
        lines += [
            Quote(
                blocks=[
                    paragraph(
                        strong(f"Caution: {quantity(len(concern), 'publication')} under an expression of concern."),
                        " The journal has questioned their reliability; read any finding they support with care:",
                    ),
                    bullets([_flagged_item("Expression of concern:", evidence[i], numbers, demo) for i in concern]),
                ]
            )
        ]
    return lines


def _cell(ids: Sequence[str], numbers: Mapping[str, int]) -> list[Inline]:
    """A count and the reference numbers of exactly the items counted."""
    return runs(f"{len(ids)} ", cites([numbers[i] for i in ids])) if ids else runs("0")


def strength_table(strength: Strength, numbers: Mapping[str, int]) -> list[Block]:
    """The counted items by design (strongest first) and by the direction of their result. Each cell gives
    the count and the reference numbers of exactly those items (every counted item is numbered)."""
    table = Table(
        header=["Design", "OCEBM 2011 level", "Favourable", "Null", "Unfavourable", "No clear result"], rows=[]
    )
    for label, cells in strength.rows:
        counts = [_cell(cells.get(way, []), numbers) for way in (*DIRECTIONS, None)]
        table.rows.append([runs(label[0].upper() + label[1:]), runs(strength.level_text(label)), *counts])
    lines: list[Block] = [table]
    if not strength.rows:
        lines = [paragraph("No item reviewed mentions the question's key terms, so none is placed in the table.")]
    notes = [
        "Each item's design comes from its publication types, MeSH headings or text, and the direction of its "
        "result from the wording of the sentence that states it (read in code, not appraised), favourable when it "
        "reads toward the question's yes as asked and unfavourable toward its no (asked whether a drug increases "
        "hospitalisation, a trial with fewer admissions is unfavourable); numbers in brackets are the references "
        "counted in each cell."
    ]
    if elsewhere := [i for i in strength.counted if i in strength.on_another_outcome]:
        notes.append(
            f'{len(elsewhere)} of the studies under "No clear result" state a result, but for another outcome than '
            "the question's (the study-results table gives it); they are not weighed."
        )
    return [*lines, paragraph(" ".join(notes))]


def counted_line(strength: Strength, collected: int) -> str:
    """Where every total of the report comes from, in one sentence."""
    stated = len(strength.stated)
    parts = [
        f"Counted: {len(strength.counted)} of the {quantity(strength.reviewed, 'item')} reviewed "
        f"{'names' if len(strength.counted) == 1 else 'name'} the question's key terms ({stated} "
        f"{'states' if stated == 1 else 'state'} a result); they are the items in the strength-of-evidence table."
    ]
    aside = [
        f"{count} {what if count != 1 else one}"
        for count, what, one in (
            (len(strength.off_topic), "off the question's topic", "off the question's topic"),
            (
                len(strength.registrations),
                "trial registrations (plans, not results)",
                "trial registration (a plan, not results)",
            ),
            (
                len(strength.not_studies),
                "web pages and commentary (not studies)",
                "web page or commentary (not a study)",
            ),
            (len(strength.retracted), "retracted", "retracted"),
            (
                len(strength.same_study),
                "other parts of a study counted once (its abstract or passages)",
                "other part of a study counted once (its abstract or passages)",
            ),
        )
        if count
    ]
    if aside:
        parts.append(f"Set aside: {', '.join(aside)}.")
    if collected > strength.reviewed:
        parts.append(f"The report reviewed the {strength.reviewed} most relevant of the {collected} items collected.")
    return " ".join(parts)


def present_designs(strength: Strength, report: ResearchReport, evidence: Mapping[str, Evidence]) -> set[str]:
    """The designs of the studies in people the report counts or cites."""
    designs = {view.design for view in strength.in_humans()}
    cited = {i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids}
    for i in cited:
        if i in evidence and evidence[i].grade.population not in ("animals", "in_vitro"):
            designs.add(evidence[i].grade.design)
    return designs


ASPECT_NAMES = (
    ("mechanism", "Mechanism"),
    ("clinical", "Clinical evidence"),
    ("safety", "Safety and contrary evidence"),
)


def assessment_lines(assessment: Assessment, text: ModelText, verdict: Verdict | None = None) -> list[Block]:
    """The judge's scores as capped, each with what it gave and why it was capped. A score says how much
    evidence of its kind there is and how strong, not which way it points: the introduction says so, and
    under a "No" says what a high clinical score means, so it does not read as a score for the intervention."""
    which_way = (
        f' A high score beside the verdict "{VERDICT_WORDS[verdict.label]}" means strong evidence for that answer '
        "(for instance trials that found no benefit), not evidence that the intervention works."
        if verdict is not None and AFFIRMING.get(verdict.label) is False
        else ""
    )
    intro = paragraph(
        "The judge rated the items it was shown in its last round (the strongest studies on the question first, then "
        "by relevance and diversity; not every "
        "item collected); each score is capped in code by what the counted studies can support. A score rates how "
        f"much evidence of its kind there is and how strong it is, not which way it points.{which_way}"
    )
    lines = []
    for name, label in ASPECT_NAMES:
        aspect = getattr(assessment, name)
        caps = [cap for cap in assessment.caps if cap.aspect == name]
        capped = (
            runs(" ", em(f"(the judge gave {caps[0].given:g}; capped: ", text(caps[-1].reason), ")"))
            if caps and caps[0].given != aspect.score
            else []
        )
        lines.append(item(strong(f"{label}: {aspect.score}/10."), *capped, " ", text(aspect.reason)))
    decision = "sufficient" if assessment.sufficient else "not sufficient"
    stop_caps = [cap for cap in assessment.caps if cap.aspect == "sufficient"]
    note = runs(" ", em("(the judge said sufficient; ", text(stop_caps[-1].reason), ")")) if stop_caps else []
    lines.append(item(strong("Judge's decision:"), f" {decision}, confidence {assessment.confidence:.2f}.", *note))
    return [intro, bullets(lines)]


VERDICT_WORDS = {
    "yes": "Yes",
    "no": "No",
    "maybe": "Maybe",
    "supported": "Supported",
    "refuted": "Refuted",
    "mixed": "Mixed",
    "insufficient": "Insufficient evidence",
}


def _one_study(verdict: Verdict) -> str:
    """ "from one study" beside a code verdict's confidence (the share of the weight reading its way) when GRADE rated
    one study: "confidence 1.00" from one trial is no certainty."""
    one = verdict.by == "code" and len(verdict.certainty_ids) == 1 and verdict.label != "insufficient"
    return " from one study" if one else ""


def _graded(verdict: Verdict) -> str:
    """How far to trust a code verdict: its GRADE certainty; for an insufficient answer, that of the studies naming
    the question's outcome whose result could not be read (``certainty.grade_unread``)."""
    if verdict.by != "code" or not verdict.certainty:
        return ""
    if verdict.label == "insufficient":
        return f"; GRADE certainty of the studies naming the outcome, their result unread: {verdict.certainty}"
    return f"; GRADE certainty {verdict.certainty}"


def verdict_block(verdict: Verdict, numbers: Mapping[str, int]) -> list[Block]:
    """The report's first section: the verdict, its confidence, who gave it, and what it rests on."""
    who = "given by the report model" if verdict.by == "model" else "computed in code"
    if verdict.by == "code" and TRANSFORMER_WORDS in verdict.method:  # ``--reader transformer`` read the studies
        who += f"; each study's result read by {TRANSFORMER_WORDS}"
    marks = [numbers[i] for i in dict.fromkeys(verdict.evidence_ids) if i in numbers]
    rests = (
        runs(" It rests on ", cites(marks))
        if marks
        else runs(" It rests on no counted study's result for the question")
        if verdict.label == "insufficient"
        else runs(" No collected item bears on it")
    )
    strongest = ""
    if verdict.strongest_design:
        level = f", OCEBM level {verdict.strongest_level}" if verdict.strongest_level else ""
        strongest = f"; the strongest design behind it: {verdict.strongest_design}{level}"
    against = [numbers[i] for i in dict.fromkeys(verdict.against_ids) if i in numbers]
    caution = runs(" Counted studies that read the other way: ", cites(against), ".") if against else []
    disagreement: list[Inline] = []
    if verdict.counted is not None:
        read = [numbers[i] for i in dict.fromkeys(verdict.counted.evidence_ids) if i in numbers]
        resting = runs(", resting on ", cites(read)) if read else []
        disagreement = runs(
            " The counted studies' readings, weighed in code, say otherwise: ",
            strong(VERDICT_WORDS[verdict.counted.label]),
            f" ({verdict.counted.confidence_text}",
            resting,
            ").",
        )
    # A code verdict says how it weighed: by design level, size and directness, which the brief's plain
    # count by design does not, so the two may read differently.
    how = f" {verdict.rationale}" if verdict.by == "code" and verdict.rationale else ""
    # Nothing to be confident of: "Insufficient evidence (confidence 0.00" read as a figure about the evidence.
    sure = "" if verdict.label == "insufficient" and not verdict.confidence else verdict.confidence_text
    sure += f"{_one_study(verdict)}, " if sure else ""
    return [
        heading("Verdict"),
        paragraph(
            strong(VERDICT_WORDS[verdict.label]),
            f" ({'borderline; ' if verdict.borderline else ''}{sure}{who}{_graded(verdict)}).",
            rests,
            strongest,
            ".",
            caution,
            disagreement,
            how,
        ),
    ]
