"""Directness before weight: which parts of a question's frame an item names. Only an item naming the question's
intervention (by its own words, an index term or another name) with its outcome (its condition, when it names
none) may carry the answer (``direct_to_the_frame``); the parts nothing collected names are what an insufficient
answer says (``frame_gaps``)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.other_names import named_otherwise
from deepcritical.appraisal.question_comparison import ANY_OUTCOME
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.reading.comparison import stems
from deepcritical.reading.frame import frame_question

MAX_MARK = 3  # a mark of an intervention's name: "D", "B12", "2" (of "type 2")


def _marks_of(intervention: str) -> list[re.Pattern[str]]:
    """The intervention's short marks that its stems leave out ("D" of vitamin D, "B12"), each after the word
    before it: "vitamin D3" names vitamin D, "vitamin C" does not. After a function word the mark is a setting
    and named alone: "NPWT at 125 mmHg" is named by "treated with 125 and 75 mm Hg" (not by 75 alone)."""
    return [
        re.compile(
            rf"(?<![\w.]){re.escape(mark)}(?![\w.])"
            if not stems(before)
            else rf"\b{re.escape(before)}[\s-]*{re.escape(mark)}(?![a-z])",
            re.IGNORECASE,
        )
        for before, mark in itertools.pairwise(intervention.split())
        if len(mark) <= MAX_MARK and _is_mark(mark) and not stems(mark)
    ]


def _is_mark(word: str) -> bool:
    """A capital letter or a number, with letters or not ("D", "B12", "2"); never a function word ("of")."""
    return word.isalnum() and ((len(word) == 1 and word.isupper()) or any(ch.isdigit() for ch in word))


class _FrameNames:
    """Which part of the question's frame an item names: its intervention (by its own words, an index term or
    another name: "the empagliflozin group" is no colchicine, "SSRIs" is named by a trial of sertraline), and
    its outcome (its condition, when it names no outcome)."""

    def __init__(self, reader: StudyReader) -> None:
        self.reader = reader
        self.frame = frame = frame_question(reader.question)
        self.intervention = frozenset(stems(frame.intervention or "")) or reader.comparison.intervention
        self.target = frame.outcomes[0] if frame.outcomes else frame.population
        self.wanted = frozenset(stems(self.target or "")) - ANY_OUTCOME
        self.marks = _marks_of(frame.intervention or "")

    @staticmethod
    def _names(words: frozenset[str], view: EvidenceView) -> bool:
        text = " ".join((view.title, view.text, *view.mesh))
        # A hyphen joins or parts the same words: "double-balloon enteroscopy" names "double balloon enteroscopy",
        # and the other way round.
        named = set(stems(text)) | set(stems(text.replace("-", " ")))
        hits = {
            word for word in words if word in named or ("-" in word and set(stems(word.replace("-", " "))) <= named)
        }
        # A long entity is named by two thirds of its words, as the topic reads it (``topic._names``).
        return bool(words) and 3 * len(hits) >= 2 * len(words) if len(words) >= 3 else hits == words

    def target_in(self, view: EvidenceView) -> bool:
        if self.frame.outcomes and self.reader.asks_outcome:
            return self.reader.names_outcome(view)
        return self._names(self.wanted, view)

    def intervention_in(self, view: EvidenceView) -> bool:
        if not self.intervention:
            return True
        written = (self.frame.intervention or "").split()
        text = f"{view.title} {view.text}"
        if not all(mark.search(text) for mark in self.marks):
            return False  # vitamin C is no vitamin D
        return self._names(self.intervention, view) or bool(named_otherwise(written, text))

    def direct(self, view: EvidenceView) -> bool:
        """The item names the intervention and the question's outcome (its condition when it names no outcome)."""
        return self.intervention_in(view) and (not self.wanted or self.target_in(view))


def direct_to_the_frame(views: Sequence[EvidenceView], reader: StudyReader) -> list[EvidenceView]:
    """The items of ``views`` that name the question's intervention with its outcome: the only ones that may
    carry its answer (directness before weight: metformin in heart failure is not answered by empagliflozin
    trials, nor vitamin D in sepsis by a guideline on vitamin C)."""
    names = _FrameNames(reader)
    return [view for view in views if names.direct(view)]


def naming_the_intervention(views: Sequence[EvidenceView], reader: StudyReader) -> list[EvidenceView]:
    """The items of ``views`` that name the question's intervention (or exposure), whatever else they name."""
    names = _FrameNames(reader)
    return [view for view in views if names.intervention_in(view)]


def frame_gaps(views: Sequence[EvidenceView], reader: StudyReader) -> list[str]:
    """The parts of the question's frame no item of ``views`` names together: its intervention, and its outcome
    (its condition, when it names no outcome: "Is amoxicillin effective for acute otitis media?"). Statin trials
    in sepsis and metformin studies of dementia name statins and dementia, but none both: "intervention
    (statins) with outcome (dementia)"."""
    names = _FrameNames(reader)
    frame, target = names.frame, names.target
    on_intervention = [view for view in views if names.intervention_in(view)]
    if not on_intervention:
        return [f"intervention ({frame.intervention or reader.comparison.written[0].strip()})"]
    if names.wanted and not any(names.target_in(view) for view in on_intervention):
        kind = "outcome" if frame.outcomes else "condition"
        if any(names.target_in(view) for view in views):
            return [f"intervention ({frame.intervention}) with {kind} ({target})"]
        return [f"{kind} ({target})"]
    return []
