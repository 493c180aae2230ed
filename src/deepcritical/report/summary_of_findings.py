"""The summary of findings at the top of a report, as Cochrane writes one: for the question's outcome, the
relative effect (95% CI) pooled or from the best study, the participants (studies), the GRADE certainty with the
reason for each level it was rated down, and the plain-language statement GRADE prescribes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepcritical.appraisal.certainty import plain_language
from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.strength import Strength
from deepcritical.outputs import CERTAINTIES, Verdict
from deepcritical.reading.comparison import stems
from deepcritical.reading.frame import QuestionFrame
from deepcritical.reading.pooling import PLOTTED_MEASURES
from deepcritical.report.document import Block, Item, Table, bullets, cites, heading, paragraph, runs
from deepcritical.report.figure_data import Figures
from deepcritical.report.results import effect_text

# GRADE's symbols: one filled circle per level of certainty.
_SYMBOLS = {level: "⊕" * (rank + 1) + "◯" * (3 - rank) for rank, level in enumerate(CERTAINTIES)}


def best_effect(rows: Sequence[StudyResult], ids: Sequence[str], figures: Figures, outcome: str) -> str:
    """The relative effect with its interval: a forest plot's pooled estimate for the outcome when there is
    one, else the estimate with an interval of the first study the verdict rests on that states one."""
    wanted = set(stems(outcome))
    for plot in figures.forest_plots:
        if plot.pooled is not None and wanted & set(stems(plot.outcome)):
            pooled = plot.pooled
            return f"{plot.measure} {pooled.value:.2f} ({pooled.ci_low:.2f} to {pooled.ci_high:.2f}), pooled"
    for study in ids:
        for row in rows:
            if row.id == study and row.measure in PLOTTED_MEASURES and row.ci_low is not None:
                return f"{effect_text(row)}, one study"
    return "not stated with an interval"


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
    outcome = (frame.outcomes[0] if frame is not None and frame.outcomes else None) or "the outcome"
    studies = list(dict.fromkeys([*verdict.evidence_ids, *verdict.against_ids]))
    sizes = [counted.views[i].n for i in studies if i in counted.views]
    people = sum(n for n in sizes if n)
    participants = f"{people:,} ({len(studies)} stud{'y' if len(studies) == 1 else 'ies'})" if studies else "–"
    certainty = f"{_SYMBOLS[verdict.certainty]} {verdict.certainty}" if verdict.certainty else "not rated"
    comparator = frame.comparator if frame is not None and frame.comparator else "the comparator each study used"
    table = Table(
        header=["Outcome", "Relative effect (95% CI)", "Participants (studies)", "Certainty (GRADE)", "What happens"],
        rows=[
            [
                runs(outcome),
                runs(best_effect(figures.rows, verdict.evidence_ids, figures, outcome)),
                runs(f"{participants} ", cites([numbers[i] for i in studies if i in numbers])),
                runs(certainty),
                runs(plain_language(verdict.answer, verdict.certainty, intervention, outcome)),
            ]
        ],
    )
    lines: list[Block] = [
        heading("Summary of findings"),
        paragraph(f"{intervention} compared with {comparator}. The answer: {verdict.answer}."),
        table,
    ]
    if verdict.certainty_reasons:
        lines += [bullets([Item(runs=runs(reason)) for reason in verdict.certainty_reasons])]
    return lines
