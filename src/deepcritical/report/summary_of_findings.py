"""The summary of findings at the top of a report, as Cochrane writes one: for the question's outcome, the
relative effect (95% CI) pooled or from the best study, the participants (studies), the GRADE certainty with the
reason for each level it was rated down, and the plain-language statement GRADE prescribes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deepcritical.appraisal.certainty import people_counted, plain_language
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.question_comparison import ANY_OUTCOME, SAME_OUTCOME
from deepcritical.appraisal.question_outcome import primary_outcome
from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.strength import Strength
from deepcritical.outputs import CERTAINTIES, ReviewAnswer, Verdict
from deepcritical.reading.comparison import stems
from deepcritical.reading.frame import GENERIC_OUTCOMES, QuestionFrame
from deepcritical.reading.pooling import PLOTTED_MEASURES
from deepcritical.report.document import Block, Item, Table, bullets, cites, heading, paragraph, runs
from deepcritical.report.figure_data import Figures
from deepcritical.report.results import effect_text
from deepcritical.text import shorten
from deepcritical.vocabulary import REVIEW_DESIGNS

# GRADE's symbols: one filled circle per level of certainty.
_SYMBOLS = {level: "⊕" * (rank + 1) + "◯" * (3 - rank) for rank, level in enumerate(CERTAINTIES)}


def body_participants(views: Sequence[EvidenceView], studies: int) -> str:
    """The body's participants and studies. A review beside primary studies may have pooled them: then the
    larger of its people and theirs, as "at least" (never counted twice)."""
    if not studies:
        return "–"
    counted = f"({studies} stud{'y' if studies == 1 else 'ies'})"
    people, lower_bound = people_counted([(view.n or 0, view.design in REVIEW_DESIGNS) for view in views])
    return f"{'at least ' if lower_bound else ''}{people:,} {counted}"


def best_effect(
    rows: Sequence[StudyResult], ids: Sequence[str], figures: Figures, outcome: str, answer: ReviewAnswer
) -> str:
    """The relative effect with its interval for ``outcome``: a forest plot's pooled estimate for it when there is
    one, else the estimate with an interval of the first study of ``ids`` (the body of evidence, the studies the
    answer rests on first) that states one for it. Never another outcome's number: a study stating estimates for
    falls and for fractures gives the fractures row its fractures estimate, and a study whose only estimates name
    other outcomes gives none. An uncertain effect from several studies not pooled shows no one study's number."""
    wanted = frozenset(stems(outcome)) - ANY_OUTCOME
    for plot in figures.forest_plots:
        if plot.pooled is not None and _names(wanted, plot.outcome):
            pooled = plot.pooled
            return f"{plot.measure} {pooled.value:.2f} ({pooled.ci_low:.2f} to {pooled.ci_high:.2f}), pooled"
    if answer == "uncertain effect" and len(ids) > 1:
        return "not pooled; the studies' results differ"
    for study in ids:
        stated = [row for row in rows if row.id == study and row.measure in PLOTTED_MEASURES and row.ci_low is not None]
        on_outcome = [row for row in stated if _names(wanted, row.outcome)]
        if on_outcome:
            return f"{effect_text(on_outcome[0])}, one study"
        if len(stated) == 1 and not stated[0].outcome:  # one estimate, its outcome unnamed: the study's result
            return f"{effect_text(stated[0])}, one study"
    return "not stated with an interval"


def _names(wanted: frozenset[str], outcome: str | None) -> bool:
    """Whether ``outcome`` (a row's or a plot's) names one of the ``wanted`` words or another word for it."""
    named = set(stems(outcome or ""))
    return any(SAME_OUTCOME.get(stem, frozenset({stem})) & named for stem in wanted)


# What a yes or a no to a question of benefit ("improve outcomes", "help") says of the measured outcome's movement.
_BENEFIT = {"yes": " (a benefit)", "no": " (no benefit)"}
# A measured outcome's words, at most this many characters in the table; its bracketed asides left out.
_OUTCOME_CHARS = 90
_ASIDE = re.compile(r"\s*\([^()]*\)")


@dataclass(frozen=True)
class MeasuredOutcome:
    """The outcome an answer's studies measured: its name, its name in the table and how the answer names it."""

    name: str
    outcome: str
    said: str


def measured_outcome(counted: Strength, figures: Figures, ids: Sequence[str]) -> MeasuredOutcome:
    """The outcome the studies an answer rests on measured: the primary outcome the first of them defines ("the
    primary outcome was a composite of ..."), else the outcome of its stated estimate, else a plain description."""
    for study in ids:
        if study in counted.views and (primary := primary_outcome(counted.views[study].text)):
            name = shorten(_ASIDE.sub("", primary), _OUTCOME_CHARS, on_word=True)
            return MeasuredOutcome(name, f"{name} (primary outcome)", f"the primary outcome of the studies, {name}")
        for row in figures.rows:
            if row.id == study and row.outcome:
                name = shorten(_ASIDE.sub("", row.outcome), _OUTCOME_CHARS, on_word=True)
                return MeasuredOutcome(name, name, f"the outcome the studies measured, {name}")
    measured = "the outcomes the studies measured"
    return MeasuredOutcome(measured, measured, measured)


def summary_of_findings(
    verdict: Verdict,
    frame: QuestionFrame | None,
    counted: Strength,
    figures: Figures,
    numbers: Mapping[str, int],
) -> list[Block]:
    """The section; none for a verdict without an answer (an open question's candidates, a model's verdict)."""
    if verdict.answer is None or verdict.label == "open":
        return []
    intervention = (frame.intervention if frame is not None else None) or "the intervention"
    named = frame.outcomes[0] if frame is not None and frame.outcomes else None
    # The body of evidence GRADE rated is the row's: its participants, its studies and its effect (a record from
    # before the body was kept: the studies the verdict rests on and those reading against it).
    studies = list(verdict.certainty_ids) or list(dict.fromkeys([*verdict.evidence_ids, *verdict.against_ids]))
    resting = [i for i in verdict.evidence_ids if i in studies] + [i for i in studies if i not in verdict.evidence_ids]
    outcome = stated = named or "the outcomes the studies measured"
    answer_said: str = verdict.answer
    if (named is None or named.lower() in GENERIC_OUTCOMES) and verdict.answer in ("higher", "lower", "no difference"):
        # "improve outcomes" names no outcome: the answer is the movement of the outcome the evidence measured (the
        # primary outcome of the studies it rests on), and whether that is the benefit asked about.
        measured = measured_outcome(counted, figures, resting)
        outcome, stated = measured.outcome, measured.name
        answer_said = f"{verdict.answer}{_BENEFIT.get(verdict.label, '')}, on {measured.said}"
    elif named is None or named.lower() in GENERIC_OUTCOMES:
        # No outcome of its own and no one movement: said so, not a placeholder ("the outcome").
        outcome, stated = "none named by the question (each study's own outcome)", "the outcomes the studies measured"
        answer_said = f"{verdict.answer}, across the outcomes the studies measured (the question names none)"
    participants = body_participants([counted.views[i] for i in studies if i in counted.views], len(studies))
    certainty = f"{_SYMBOLS[verdict.certainty]} {verdict.certainty}" if verdict.certainty else "not rated"
    comparator = frame.comparator if frame is not None and frame.comparator else "the comparator each study used"
    table = Table(
        header=["Outcome", "Relative effect (95% CI)", "Participants (studies)", "Certainty (GRADE)", "What happens"],
        rows=[
            [
                runs(outcome),
                runs(best_effect(figures.rows, resting, figures, stated, verdict.answer)),
                runs(f"{participants} ", cites([numbers[i] for i in studies if i in numbers])),
                runs(certainty),
                runs(plain_language(verdict.answer, verdict.certainty, intervention, stated)),
            ]
        ],
    )
    lines: list[Block] = [
        heading("Summary of findings"),
        paragraph(
            f"{intervention[:1].upper()}{intervention[1:]} compared with {comparator}. The answer: {answer_said}."
        ),
        table,
    ]
    if verdict.certainty_reasons:
        lines += [bullets([Item(runs=runs(reason)) for reason in verdict.certainty_reasons])]
    return lines
