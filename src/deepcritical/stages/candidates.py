"""An open question ("Which drugs reduce mortality in sepsis?", "What treatments reduce fatigue in long
COVID?") has no yes or no: its answer is the interventions the counted studies tested, each with how its
studies' results for the question's outcome read. ``open_verdict`` builds that verdict from the counted
set; ``open_block`` writes it as the report's first section."""

from __future__ import annotations

import re
from collections.abc import Mapping

from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import MAX_CANDIDATES, MAX_VERDICT_IDS, Candidate, Verdict
from deepcritical.reading.comparison import stems
from deepcritical.reading.frame import QuestionFrame, frame_question
from deepcritical.stages.document import Block, Table, cites, heading, paragraph, runs
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reader_choice import read_by
from deepcritical.stages.strength import Strength, is_lab
from deepcritical.stages.study_reading import study_reader
from deepcritical.vocabulary import Direction

OPEN_METHOD = (
    "code: the question asks which intervention; each counted study's result for the question's outcome, read "
    "by the trained result reader, listed under the intervention its title names"
)
# A leading tag in brackets ("[DEMO]", "[Letter]") is no part of a title's subject.
_TAG = re.compile(r"^\s*\[[^\]]{1,40}\]\s*")
# Words that say how or when an intervention was given, not which: "pre-admission statin use", "statin
# continuation" and "statins" are one candidate.
_HOW_GIVEN = frozenset(
    stems(
        "use users using continuation continued pretreatment pre admission initiation starting chronic long short "
        "term therapy treatment supplementation high low dose daily oral intravenous early late"
    )
)
_AND = re.compile(r"\s+(?:and|in|on|for)\s+", re.IGNORECASE)


def intervention_of(view: EvidenceView) -> str:
    """The intervention a study's title names ("Rosuvastatin for sepsis-associated ARDS: ..." is
    rosuvastatin), read by the question's own framing; the title's opening words when it names none."""
    title = _TAG.sub("", view.title).strip()
    frame = frame_question(title if title.endswith("?") else f"{title}?")
    named = frame.intervention or title
    # "Pre-admission statin use and 30-day mortality": the intervention is what comes before its outcome.
    return _AND.split(named, maxsplit=1)[0].strip(" .:;,") or named


def _key(intervention: str) -> frozenset[str]:
    """The words that say which intervention ("pre-admission statin use" is statin); empty when the name
    says only how it was given ("continuation")."""
    return frozenset(stems(intervention.replace("-", " "))) - _HOW_GIVEN


def _rank(view: EvidenceView) -> tuple[int, int, int]:
    level = view.level if view.level is not None and not is_lab(view) else 6
    return (level, 1 if is_lab(view) else 0, -(view.n or 0))


def open_verdict(question: str, counted: Strength, frame: QuestionFrame | None = None) -> Verdict:
    """The verdict of an open question: ``open``, with each candidate intervention and its studies'
    readings for the question's outcome (studies that report other outcomes are left out); strongest
    candidates (by their best design) first."""
    frame = frame or frame_question(question)
    reader = study_reader(question)
    groups: dict[frozenset[str], list[tuple[str, EvidenceView, Direction]]] = {}
    # A title whose subject is the question's outcome or population ("Prevalence of fatigue after COVID")
    # names no intervention.
    asked = frozenset(stems(" ".join([*frame.outcomes, frame.population or ""]).replace("-", " ")))
    for i in counted.stated:
        view, way = counted.views[i], counted.directions[i]
        if way is None or view.design in ("web", "unknown", "editorial_or_letter", "narrative_review"):
            continue
        if reader.read(view).direction is None:
            continue
        name = intervention_of(view)
        if _key(name) & asked:
            continue
        groups.setdefault(_key(name), []).append((name, view, way))
    # A title that names only how ("Continuation versus interruption of chronic statin therapy") joins the
    # candidate whose name its title holds.
    for name, view, way in groups.pop(frozenset(), []):
        title = set(stems(view.title.replace("-", " ")))
        home = next((key for key in groups if key <= title), frozenset(stems(view.title)) - _HOW_GIVEN)
        groups.setdefault(home, []).append((name, view, way))
    candidates = []
    for members in groups.values():
        members.sort(key=lambda member: _rank(member[1]))
        strongest = members[0][1]
        names = [name for name, _, _ in members]
        candidates.append(
            Candidate(
                intervention=min((n for n in names if _key(n)), key=len, default=names[0]),
                **{
                    way: [counted.record_of(view.id) for _, view, w in members if w == way][:MAX_VERDICT_IDS]
                    for way in ("favourable", "null", "unfavourable")
                },
                strongest_design=DESIGN_LABELS.get(strongest.design, strongest.design),  # type: ignore[call-overload]
                strongest_level=strongest.level if not is_lab(strongest) else None,
            )
        )
    candidates.sort(key=lambda c: (c.strongest_level or 6, -(len(c.favourable) + len(c.null) + len(c.unfavourable))))
    candidates = candidates[:MAX_CANDIDATES]
    outcome = "; ".join(frame.outcomes) or "the question's outcome"
    resting = [i for c in candidates for i in (*c.favourable, *c.null, *c.unfavourable)]
    return Verdict(
        label="open",
        confidence=0.0,
        evidence_ids=resting[:MAX_VERDICT_IDS],
        by="code",
        method=read_by(OPEN_METHOD),
        rationale=(
            f"The question asks which intervention, so it has no yes or no: {len(candidates)} candidate "
            f"intervention(s) among the counted studies that state a result for {outcome}."
            if candidates
            else f"The question asks which intervention; no counted study states a result for {outcome}."
        ),
        candidates=candidates,
    )


def open_block(verdict: Verdict, numbers: Mapping[str, int]) -> list[Block]:
    """The report's first section for an open question: each candidate with its studies by direction."""
    lines: list[Block] = [heading("Candidate interventions"), paragraph(verdict.rationale)]
    table = Table(header=["Intervention", "Favourable", "Null", "Unfavourable", "Strongest design"], rows=[])
    for candidate in verdict.candidates:
        cells = []
        for ids in (candidate.favourable, candidate.null, candidate.unfavourable):
            marks = [numbers[i] for i in dict.fromkeys(ids) if i in numbers]
            cells.append(runs(f"{len(ids)} ", cites(marks)) if ids else runs("0"))
        level = f", OCEBM level {candidate.strongest_level}" if candidate.strongest_level else ""
        strongest = runs(f"{candidate.strongest_design or 'unknown'}{level}")
        table.rows.append([runs(candidate.intervention), *cells, strongest])
    if verdict.candidates:
        lines.append(table)
    lines += [
        paragraph(
            "Each study is listed under the intervention its title names, and read for the question's outcome in "
            "code (significantly better, no significant difference, or worse); this is a list to read, not a ranking."
        )
    ]
    return lines
