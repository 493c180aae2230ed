"""The question's outcome as a study names it: whether a sentence reports it (in its words, another word for it,
as the study's defined primary outcome or its one measure, by an abbreviation the study defines), whether a clause
states it apart from a composite it is part of, and whether a study names it anywhere. ``StudyReader`` reads each
study's result with it."""

from __future__ import annotations

import re

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.question_comparison import ANY_OUTCOME, SAME_OUTCOME, names_clinical_outcome
from deepcritical.reading.abbreviations import defined_abbreviations
from deepcritical.reading.comparison import stems
from deepcritical.reading.frame import QuestionFrame
from deepcritical.reading.frame_words import OUTCOME_MEASURES
from deepcritical.reading.units import TextUnit
from deepcritical.text import collapse_whitespace

_MEASURES = frozenset(stems(" ".join(OUTCOME_MEASURES)))
_ASKS_BENEFIT = re.compile(r"\b(?:help|benefit)s?\b(?!\s+(?:from|predict))", re.IGNORECASE)
# A statistic in a sentence: a percentage, a ratio, an interval or a p-value.
_STATISTIC_WORDS = r"\d\s*%|\b(?:[HOR]R|CI)\b|\bp\s*[<=>≤]"
_STATISTIC = re.compile(_STATISTIC_WORDS, re.I)
# What a trial calls a measured outcome after its kind: "primary (efficacy) outcome(s)", "main end-point".
_OUTCOME_NOUN = r"\s+(?:\w+\s+)?(?:outcome|end-?point)s?\b"
# A trial's own name for what it measured: "the primary outcome occurred in 16.3% of ...".
_TRIAL_OUTCOME = re.compile(rf"\b(?:primary|secondary|composite|main){_OUTCOME_NOUN}", re.I)
# The kind of outcome a sentence names ("primary", "secondary", "main"), to find the study's definition of it.
_OUTCOME_KIND = re.compile(rf"\b(primary|secondary|main){_OUTCOME_NOUN}", re.I)
# A sentence that states the primary outcome's result in numbers (not its definition in the methods).
_PRIMARY_RESULT = re.compile(rf"\bprimary\s+(?:\w+\s+)?(?:outcome|end-?point)\b(?=.*(?:{_STATISTIC_WORDS}))", re.I)
# Where a study says what its primary (or secondary, main) outcome was: "The primary outcome was a composite of
# first hospitalisation for heart failure or death from any cause."
_OUTCOME_DEFINED = re.compile(
    rf"\b(primary|secondary|main){_OUTCOME_NOUN}\s+(?:was|were|is|are|included|comprised)\s+([^.;]+)", re.I
)
# A definition of several outcomes at once ("a composite of death or hospitalisation"), whose words a sentence on
# one of them also names.
_SEVERAL = re.compile(r"\b(?:composite|or|and)\b|,", re.I)
# A composite outcome named in a sentence ("the composite of cardiovascular death or hospitalisation for heart
# failure", "the combined risk of ..."), up to a bracket, a comma, a semicolon or the sentence's end.
_COMPOSITE = re.compile(r"\b(?:composite|combined)\b(?:\s+\w+)?\s+of\s+[^(;,.]+", re.I)
_COMPOSITE_WORD = re.compile(r"\b(?:composite|combined)\b", re.I)


class QuestionOutcome:
    """The outcome of one question (its frame's outcomes, population and the comparison's outcome words), matched
    against studies' sentences; what a study defines (its abbreviations) is kept per study."""

    def __init__(self, question: str, frame: QuestionFrame, comparison_outcome: frozenset[str]) -> None:
        self._comparison_outcome = comparison_outcome
        self._item_outcomes: dict[str, list[frozenset[str]]] = {}
        # The frame's own outcomes ("mortality", "fractures"), each as the stems a sentence may name it by;
        # none when the question names only "outcomes" or a condition to treat ("for Alzheimer's disease").
        outcomes = [frozenset(stems(outcome)) - ANY_OUTCOME for outcome in frame.outcomes]
        self._outcomes = [
            frozenset().union(*(SAME_OUTCOME.get(stem, {stem}) for stem in outcome)) for outcome in outcomes if outcome
        ]
        # Each outcome word by word (each word with the other words for it), to rank sentences by how much of the
        # outcome they name: "invasive breast cancer" is named whole by one sentence, only as "cancer" by another.
        self._outcome_words = [
            [SAME_OUTCOME.get(stem, frozenset({stem})) for stem in sorted(outcome)] for outcome in outcomes if outcome
        ]
        self._population = frozenset(stems(frame.population or "")) - ANY_OUTCOME
        # "outcomes" asks for a clinical outcome, and so does "help" or "benefit" without an outcome of its own
        # ("Do SGLT2 inhibitors help heart failure?" is "... improve outcomes in heart failure?").
        self._generic_outcome = not self._outcomes and (bool(frame.outcomes) or bool(_ASKS_BENEFIT.search(question)))
        self._population_name = re.compile(re.escape(frame.population), re.I) if frame.population else None

    def on_outcome(self, sentence: str, item: EvidenceView) -> bool:
        """Whether ``sentence`` reports the question's outcome: one of the frame's outcomes, in its words or
        another word for it ("died" for mortality). A question whose outcome is only "outcomes" ("in heart
        failure") is answered by a clinical outcome (not "PCr/ATP ratio"); one with no outcome ("repurposed
        for Alzheimer's disease") by a clinical outcome, or by any result of a study that names its population."""
        if self._outcomes:
            return self._names_outcome(sentence, item, composites=True)
        # A clinical outcome other than the population's own name ("heart failure" is who, not what).
        outcome_words = self._population_name.sub(" ", sentence) if self._population_name else sentence
        if names_clinical_outcome(outcome_words):
            return True
        if _TRIAL_OUTCOME.search(sentence):
            return True
        if self._generic_outcome:  # "outcomes" asks for a clinical one
            return False
        if self._population:
            return bool(self._population & set(stems(f"{item.title} {item.text}")))
        outcome = self._comparison_outcome
        return not outcome or bool(outcome & set(stems(sentence)))

    def _names_outcome(self, sentence: str, item: EvidenceView, *, composites: bool) -> bool:
        """Whether ``sentence`` names one of the frame's outcomes; with ``composites`` False, not when it names it
        only as a part of a composite outcome ("the combined risk of cardiovascular death or hospitalisation", or
        "the primary outcome" the study defined as such a composite)."""
        named = set(stems(sentence if composites else _COMPOSITE.sub(" ", sentence)))
        # "The primary outcome occurred in 8.2% ... (HR 0.90)" reports the outcome the study defined as primary.
        named |= self._defined_outcome(sentence, item, composites=composites)
        # "FACIT-Fatigue improved by 6.8 points": the primary measure, named by its own words.
        measure = self._primary_measure(item)
        if measure and measure <= set(stems(re.sub(r"(?<!\bnon)-", " ", sentence, flags=re.I))):
            named |= measure
        return any(outcome & named for outcome in self._outcomes_of(item))

    def _outcome_named(self, sentence: str, item: EvidenceView) -> int:
        """How many words of the question's outcome (the best-named of its outcomes) ``sentence`` names, in its
        words, another word for it or as the study's defined primary outcome."""
        named = set(stems(sentence)) | self._defined_outcome(sentence, item)
        return max((sum(bool(word & named) for word in outcome) for outcome in self._outcome_words), default=0)

    def _outcome_itself(self, units: list[TextUnit], item: EvidenceView) -> dict[TextUnit, TextUnit]:
        """The clauses of ``units`` (split at semicolons) that state a result for the question's outcome itself,
        not for a composite of which it is a part ("cardiovascular death was not significantly reduced (HR 0.91)"
        after "the effect was driven by fewer hospitalisations (HR 0.71); "), each with the unit it is from."""
        clauses: dict[TextUnit, TextUnit] = {}
        for unit in units:
            offset = unit.start
            for part in unit.text.split(";"):
                text = part.strip()
                start = unit.start + unit.text.index(text, offset - unit.start) if text else offset
                offset = start + len(text)
                if text and self._names_outcome(text, item, composites=False):
                    clauses[TextUnit(text, start, offset, unit.section)] = unit
        return clauses

    @property
    def specific_outcome(self) -> bool:
        """Whether the question names an outcome of its own ("fractures"), not only "outcomes" or none."""
        return bool(self._outcomes)

    @property
    def asks_outcome(self) -> bool:
        """Whether the question names an outcome ("fractures"; "outcomes": any clinical one)."""
        return bool(self._outcomes) or self._generic_outcome

    def names_outcome(self, item: EvidenceView) -> bool:
        """Whether the study names one of the question's own outcomes anywhere (it studied it), whatever its
        results sentences say; never for a question with no outcome of its own ("outcomes in heart failure")."""
        named = set(stems(f"{item.title} {item.text}"))
        # Words of how it is counted go when others remain: "the risk of dementia" is named by "dementia", never by
        # a sepsis trial's "risk of muscle injury" (a sentence's result may still say "risk" for the outcome).
        return any(((outcome - _MEASURES) or outcome) & named for outcome in self._outcomes_of(item))

    def _defined_outcome(self, sentence: str, item: EvidenceView, *, composites: bool = True) -> set[str]:
        """The words of the outcome a sentence names only as the study's "primary outcome" (or secondary, main),
        from the study's own definition of it; empty when the sentence names none or the study defines none (or,
        without ``composites``, defines it as a composite)."""
        kinds = {found.lower() for found in _OUTCOME_KIND.findall(sentence)}
        if not kinds:
            return set()
        defined = [
            words
            for kind, words in _OUTCOME_DEFINED.findall(f"{item.title}. {item.text}")
            if kind.lower() in kinds and (composites or not _COMPOSITE_WORD.search(words))
        ]
        return set(stems(" ".join(defined)))

    def _primary_measure(self, item: EvidenceView) -> frozenset[str]:
        """The words of a study's primary outcome when it is one measure ("the FACIT-Fatigue score at 3 months",
        as "facit", "fatigu"; not "non-fatal" as "fatal"), and it is the question's outcome; else none."""
        for kind, words in _OUTCOME_DEFINED.findall(item.text):
            if kind.lower() != "secondary" and not _SEVERAL.search(words):
                measure = frozenset(stems(re.sub(r"(?<!\bnon)-", " ", words, flags=re.I)))
                # An abbreviation the study defines for the outcome keeps its hyphen ("BDI-II", for the Beck
                # Depression Inventory-II): it names the outcome whole, not as "bdi" and "ii".
                if any(outcome & (measure | set(stems(words))) for outcome in self._outcomes_of(item)):
                    return measure
        return frozenset()

    def _states_primary(self, sentence: str, item: EvidenceView) -> bool:
        """The sentence states the primary outcome's result: it names it as such ("the primary outcome occurred
        in ... (HR 0.90)"), or names the one measure it is, with a statistic ("FACIT-Fatigue improved by 6.8 points
        ... (95% CI 2.1 to 6.3)")."""
        if _PRIMARY_RESULT.search(sentence):
            return self.on_outcome(sentence, item)
        measure = self._primary_measure(item)
        said = set(stems(re.sub(r"(?<!\bnon)-", " ", sentence, flags=re.I)))
        return bool(measure) and measure <= said and bool(_STATISTIC.search(sentence))

    def _outcomes_of(self, item: EvidenceView) -> list[frozenset[str]]:
        """The frame's outcomes, each with the abbreviations the study defines for it ("AF" for atrial
        fibrillation, when it writes "atrial fibrillation (AF)")."""
        if item.id not in self._item_outcomes:
            defined = defined_abbreviations(f"{item.title}. {item.text}")
            self._item_outcomes[item.id] = [
                outcome.union(*(stems(short) for short, long in defined.items() if outcome & set(stems(long))))
                for outcome in self._outcomes
            ]
        return self._item_outcomes[item.id]


def primary_outcome(text: str) -> str | None:
    """The outcome a study defines as its primary (or main) one, as it words it ("a composite of worsening heart
    failure or cardiovascular death"), or None when it defines none."""
    for kind, words in _OUTCOME_DEFINED.findall(text):
        if kind.lower() != "secondary":
            return collapse_whitespace(words)
    return None
