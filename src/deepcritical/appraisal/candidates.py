"""An open question ("Which drugs reduce mortality in sepsis?", "What treatments reduce fatigue in long
COVID?") has no yes or no: its answer is the interventions the counted studies tested, each with how its
studies' results for the question's outcome read. ``open_verdict`` builds that verdict from the counted
set; ``open_block`` writes it as the report's first section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.interventions import intervention_of
from deepcritical.appraisal.strength import Strength, is_lab
from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import MAX_CANDIDATES, MAX_VERDICT_IDS, Candidate, CandidateMember, Verdict
from deepcritical.reading.comparison import stems
from deepcritical.reading.drug_classes import class_named, member_of, stated_members
from deepcritical.reading.frame import QuestionFrame, frame_question
from deepcritical.vocabulary import UNWEIGHED_DESIGNS, Direction

OPEN_METHOD = (
    "code: the question asks which intervention; each counted study's result for the question's outcome, read "
    "by the trained result reader, listed under the intervention its title names"
)
# Words that say how or when an intervention was given, not which: "pre-admission statin use", "statin
# continuation" and "statins" are one candidate.
_HOW_GIVEN = frozenset(
    stems(
        "use users using continuation continued pretreatment pre admission initiation starting chronic long short "
        "term therapy treatment supplementation high low dose daily oral intravenous early late"
    )
)


def _key(intervention: str) -> frozenset[str]:
    """The words that say which intervention ("pre-admission statin use" is statin); empty when the name
    says only how it was given ("continuation")."""
    return frozenset(stems(intervention.replace("-", " "))) - _HOW_GIVEN


def _rank(view: EvidenceView) -> tuple[int, int, int]:
    level = view.level if view.level is not None and not is_lab(view) else 6
    return (level, 1 if is_lab(view) else 0, -(view.n or 0))


_Row = tuple[str, EvidenceView, Direction]  # the name a study's title gives, the study, its reading


@dataclass
class _Group:
    """One candidate: its name, its studies and, for a drug class, each member's own studies."""

    name: str
    rows: list[_Row] = field(default_factory=list)
    members: dict[str, list[_Row]] = field(default_factory=dict)


def _by_class(groups: Iterable[list[_Row]], texts: Sequence[str]) -> list[_Group]:
    """The candidates, a drug class and its members as one: a member joins its class by its INN stem
    (``reading.drug_classes``: rosuvastatin and atorvastatin under statins), or when a counted study's text
    lists it under another candidate ("corticosteroids such as hydrocortisone"). Each member keeps its
    studies, listed under the class; the class keeps the name a title gives it ("Statins"), else the mapping's."""
    classes: dict[str, _Group] = {}
    rest: list[_Group] = []
    for rows in groups:
        names = [name for name, _, _ in rows]
        name = min((n for n in names if _key(n)), key=len, default=names[0])
        if (found := member_of(name)) is not None:
            group = classes.setdefault(found[0].name, _Group(found[0].name))
            group.members.setdefault(found[1].lower(), []).extend(rows)
        elif (drug_class := class_named(name)) is not None:
            group = classes.setdefault(drug_class.name, _Group(drug_class.name))
            group.name = name if group.name == drug_class.name else min(group.name, name, key=len)
        else:
            rest.append(_Group(name, rows))
            continue
        group.rows += rows
    listed = [*classes.values(), *rest]
    under = stated_members(texts, [group.name for group in listed], [group.name for group in rest])
    by_name = {group.name.lower(): group for group in listed}
    for group in rest:
        home = _home(group, under, by_name)
        if home is not None:
            home.rows += group.rows
            home.members.setdefault(group.name.lower(), []).extend(group.rows)
            listed.remove(group)
    return listed


def _home(group: _Group, under: Mapping[str, str], by_name: Mapping[str, _Group]) -> _Group | None:
    """The group ``group`` is listed under, followed through members of members ("corticosteroids such as
    hydrocortisone", "hydrocortisone with or without fludrocortisone") to one that stays listed; None when
    it is listed under none, or the chain comes back to it (two drugs each listed under the other)."""
    seen = {group.name.lower()}
    home = by_name.get(under.get(group.name.lower(), "").lower())
    while home is not None and home.name.lower() not in seen:
        seen.add(home.name.lower())
        above = by_name.get(under.get(home.name.lower(), "").lower())
        if above is None:
            return home
        home = above
    return None


def open_verdict(question: str, counted: Strength, frame: QuestionFrame | None = None) -> Verdict:
    """The verdict of an open question: ``open``, with each candidate intervention and its studies'
    readings for the question's outcome (studies that report other outcomes are left out); strongest
    candidates (by their best design) first."""
    frame = frame or frame_question(question)
    reader = counted.reader_for(question)
    groups: dict[frozenset[str], list[tuple[str, EvidenceView, Direction]]] = {}
    # A title whose subject is the question's outcome or population ("Prevalence of fatigue after COVID")
    # names no intervention.
    asked = frozenset(stems(" ".join([*frame.outcomes, frame.population or ""]).replace("-", " ")))
    for i in counted.stated:
        view, way = counted.views[i], counted.directions[i]
        if way is None or view.design in UNWEIGHED_DESIGNS:
            continue
        if reader.read(view).direction is None:
            continue
        name = intervention_of(view)
        if name is None or _key(name) & asked:
            continue
        groups.setdefault(_key(name), []).append((name, view, way))
    # A title that names only how ("Continuation versus interruption of chronic statin therapy") joins the
    # candidate whose name its title holds.
    for name, view, way in groups.pop(frozenset(), []):
        title = set(stems(view.title.replace("-", " ")))
        home = next((key for key in groups if key <= title), frozenset(stems(view.title)) - _HOW_GIVEN)
        groups.setdefault(home, []).append((name, view, way))
    candidates = []
    for group in _by_class(groups.values(), [f"{view.title}. {view.text}" for view in counted.views.values()]):
        group.rows.sort(key=lambda row: _rank(row[1]))
        strongest = group.rows[0][1]
        candidates.append(
            Candidate(
                intervention=group.name,
                **{
                    way: [counted.record_of(view.id) for _, view, w in group.rows if w == way][:MAX_VERDICT_IDS]
                    for way in ("favourable", "null", "unfavourable")
                },
                strongest_design=DESIGN_LABELS.get(strongest.design, strongest.design),  # type: ignore[call-overload]
                strongest_level=strongest.level if not is_lab(strongest) else None,
                members=[
                    CandidateMember(
                        name=member,
                        ids=list(
                            dict.fromkeys(
                                counted.record_of(view.id) for _, view, _ in sorted(rows, key=lambda r: _rank(r[1]))
                            )
                        )[:MAX_VERDICT_IDS],
                    )
                    for member, rows in group.members.items()
                ],
                # The verdict of a yes/no question weighs these less (``verdict.verdict_weight``); here they are said.
                indirect={
                    counted.record_of(view.id): counted.indirect[view.id]
                    for _, view, _ in group.rows
                    if view.id in counted.indirect
                },
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
        method=reader.named_in(OPEN_METHOD),
        rationale=(
            f"The question asks which intervention, so it has no yes or no: {len(candidates)} candidate "
            f"intervention(s) among the counted studies that state a result for {outcome}."
            if candidates
            else f"The question asks which intervention; no counted study states a result for {outcome}."
        ),
        candidates=candidates,
    )
