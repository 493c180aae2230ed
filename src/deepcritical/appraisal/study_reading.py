"""One study, one reading: what the trained result reader (``reading.results``) finds a study states for
the question's comparison, turned into the question's terms (favourable, null, unfavourable).

The reader says which way the outcome moved under the intervention (significantly increased, decreased,
or no significant difference). Whether that is good depends on the outcome: less mortality, pain or events
is favourable, less survival, response or quality of life is not. The question says it first ("Do statins
*reduce* mortality?": a decrease is what it asks); else the outcome the sentence names does. What the question
asks each study (its comparison, that direction, its outcome's words) is ``appraisal.question_comparison``'s;
this module reads each study with it, once, and keeps the reader of a question's studies."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.interventions import intervention_of, names_a_treatment
from deepcritical.appraisal.other_names import named_otherwise
from deepcritical.appraisal.passages import NOT_A_RESULT
from deepcritical.appraisal.question_comparison import (
    HEALTHY_VOLUNTEERS,
    asks_effect,
    favourable_movement,
    judged_change,
    other_population,
    other_subtype,
    question_comparison,
)
from deepcritical.appraisal.question_outcome import QuestionOutcome
from deepcritical.reading.comparison import Comparison, names_intervention_arm, stems
from deepcritical.reading.frame import frame_question
from deepcritical.reading.results import ResultLabel, ResultReader, ResultReading, turned_probabilities
from deepcritical.reading.units import TextUnit, split_units
from deepcritical.vocabulary import Direction

# A sentence states a comparative result when it gives a statistic or words of change or difference;
# "X is well tolerated in heart failure" states none.
_STATES_A_RESULT = re.compile(
    r"\d\s*%|\bp\s*[<=>≤]|\bCI\b|confidence interval|\b(?:H|O|R|I?R)R\b|signific|differ|similar|compar|chang"
    r"|reduc|increas|decreas|lower|higher|fewer|more\b|less\b|improv|worse|associat|effect|benefit|risk|promot|harm"
    r"|protect|caus|prevent",
    re.IGNORECASE,
)
# How a verdict's method names the reader; the linear one keeps the words runs have always recorded.
LINEAR_WORDS = "the trained result reader"
TRANSFORMER_WORDS = "the transformer result reader"
# The arm a trial compares its treatment with: placebo, sham, usual or standard care, no treatment, control.
_CONTROL_ARM = re.compile(
    r"\s*(?:the\s+|a\s+)?(?:placebo|sham|usual care|standard care|standard treatment|control|no\s+\w+|nothing)\b",
    re.IGNORECASE,
)
_OTHER_WAY: dict[ResultLabel, ResultLabel] = {
    "increased": "decreased",
    "decreased": "increased",
    "no_difference": "no_difference",
}
# A reading this unsure states no result the report can count.
MIN_LABEL_PROBABILITY = 0.5
# A composite's significant result yields to what a study states for the question's outcome itself only when the
# reader is this sure of it: "cardiovascular death was not significantly reduced (HR 0.91, 0.76 to 1.09)" is read
# surely (0.9), "Cardiovascular death (HR 0.82) and death from any cause (HR 0.83) were also reduced" is not (0.55).
SURE_OF_A_PART = 0.7


@dataclass(frozen=True)
class StudyReading:
    """``direction`` is the study's result for the question's outcome (None when it states none: a
    study whose result is for another outcome, a muscle-injury study on a mortality question, states none);
    ``other_outcome`` is then which way its own result went, for another outcome than the question's."""

    direction: Direction | None
    reading: ResultReading
    # The sentence relied on names the question's outcome and the study its intervention: the study answers
    # the question itself, not a neighbouring one (another drug of the class, unnamed).
    direct: bool = False
    other_outcome: Direction | None = None

    @property
    def sentence(self) -> str | None:
        return self.reading.evidence[0].text if self.reading.evidence and self.direction else None


class StudyReader(QuestionOutcome):
    """Reads studies for one question; each item is read once (a run reads the same pool many times). Whether a
    sentence or a study names the question's outcome is ``QuestionOutcome``'s."""

    def __init__(self, question: str, reader: ResultReader | None = None) -> None:
        """``reader``: the run's result reader (``ResultReader.load(settings.reader)``); the linear one when
        none is given (a test, a bench)."""
        self.question = question
        frame = frame_question(question)
        comparison = question_comparison(question)
        if frame.open_intervention:  # "Which drugs ...": every study's own intervention is the one read
            comparison = Comparison.of("", comparison.written[1], comparison.written[2])
        intervention, comparator, outcome = comparison.written
        # A question about the control arm ("Does placebo increase deaths compared with dapagliflozin?") is read as
        # trials write it, the active arm as the intervention, and each reading turned back: the reader reads a
        # hazard ratio as the intervention's, so "placebo" first would read dapagliflozin's result as placebo's.
        self._control_first = bool(
            _CONTROL_ARM.match(intervention) and comparator and not _CONTROL_ARM.match(comparator)
        )
        if self._control_first:
            comparison = Comparison.of(comparator, intervention, outcome)
        self.comparison = comparison
        self._open = frame.open_intervention
        # What the verdict reads counted studies' results for: a treatment's effect. Other questions are
        # read by the stance model (``appraisal.stance.code_verdict``).
        self.asks_effect = asks_effect(question)
        self.result_reader = reader or ResultReader.load()
        super().__init__(question, frame, comparison.outcome)
        self._read: dict[tuple[str, str], StudyReading] = {}
        self._other_population = other_population(frame.population, question)

    def named_in(self, method: str) -> str:
        """A code verdict's ``method`` (worded for the linear reader) naming the reader that read the studies."""
        if self.result_reader.name == "linear":
            return method
        if LINEAR_WORDS in method:
            return method.replace(LINEAR_WORDS, TRANSFORMER_WORDS)
        return f"{method}; results read by {TRANSFORMER_WORDS}"

    def read(self, item: EvidenceView) -> StudyReading:
        key = (item.id, item.text)
        if key not in self._read:
            self._read[key] = self._read_uncached(item)
        return self._read[key]

    def _fuller_outcome(
        self, reading: ResultReading, units: list[TextUnit], comparison: Comparison, item: EvidenceView
    ) -> ResultReading:
        """The reading of the sentences that name most of the question's outcome, when the one relied on names
        less of it or states no result: "the risk ratio for invasive breast cancer was 1.24 (1.05-1.47)" answers a
        question on invasive breast cancer, "toxicity RRs were 0.55 for endometrial cancer" does not."""
        if not self._outcome_words or not units:
            return reading
        named = {unit: self._outcome_named(unit.text, item) for unit in units}
        most = max(named.values())
        if not most or (_states(reading) and self._outcome_named(reading.evidence[0].text, item) >= most):
            return reading
        again = self.result_reader.read(
            [unit for unit in units if named[unit] == most], comparison, min_evidence_probability=0.0
        )
        return again if _states(again) else reading

    def other_people(self, item: EvidenceView) -> str | None:
        """Why a study's people are not the question's ("people without heart failure"), or None."""
        if (other := self._other_condition(item)) is not None:
            return other
        return "healthy volunteers" if HEALTHY_VOLUNTEERS.search(item.text) else None

    def _other_condition(self, item: EvidenceView) -> str | None:
        """Whom a study enrols instead of the question's condition: people without it, or with another subtype
        of it ("people with reduced ejection fraction" on a question about preserved ejection fraction)."""
        text = f"{item.title} {item.text}"
        if self._other_population is not None and self._other_population.search(text):
            return f"people without {frame_question(self.question).population}"
        subtype = other_subtype(self.question, text)
        return f"people with {subtype}" if subtype is not None else None

    def _direct(self, sentence: str, item: EvidenceView) -> bool:
        """The sentence relied on names the question's outcome (or, for "outcomes", a clinical one), the study
        names the question's intervention, and its people have the question's condition: it answers the
        question, not a neighbouring one."""
        names_outcome = self.on_outcome(sentence, item)
        intervention = self.comparison.intervention
        text = f"{item.title} {item.text}"
        names_intervention = (
            not intervention
            or bool(intervention & set(stems(text)))
            or names_intervention_arm(sentence, self.comparison)
            or bool(named_otherwise(self.comparison.written[0].split(), text))
        )
        return names_outcome and names_intervention and self._other_condition(item) is None

    def _read_uncached(self, item: EvidenceView) -> StudyReading:
        if item.design == "registered_trial" or item.states_no_result:
            return StudyReading(None, ResultReading(None, {}))
        units = [
            unit
            for unit in results_units(split_units(item.text, item.section or ""))
            if not _says_what_was_measured(unit.text)
        ]
        # The arms' labels from the whole text: "(group S)" is defined in Methods, which ``units`` leave out.
        comparison = self.comparison.labelled(f"{item.title}\n{item.text}")
        reading = self.result_reader.read(units, comparison, min_evidence_probability=0.0)
        if (
            _states(reading)
            and reading.label == "no_difference"
            and not _states_no_difference(reading.evidence[0].text)
        ):
            # "Insecticide-treated nets provide effective malaria control": a background sentence states no null
            # result; the study's result is in another sentence, if any.
            units = [unit for unit in units if unit.text != reading.evidence[0].text]
            reading = self.result_reader.read(units, comparison, min_evidence_probability=0.0)
        if _states(reading) and not self.on_outcome(reading.evidence[0].text, item):
            # The best-ranked result is for another outcome: the study's result for the question's outcome,
            # when a sentence of it states one ("cardiovascular death was not significantly reduced").
            on_outcome = [unit for unit in units if self.on_outcome(unit.text, item)]
            again = self.result_reader.read(on_outcome, comparison, min_evidence_probability=0.0)
            reading = again if _states(again) else reading
        reading = self._fuller_outcome(reading, units, comparison, item)
        primary = [unit for unit in units if self._states_primary(unit.text, item)]
        if primary and not (_states(reading) and self._states_primary(reading.evidence[0].text, item)):
            # A trial answers by its primary outcome, when a Results sentence states it for the question's
            # outcome: a secondary outcome's result ("first hospitalisation for heart failure was less frequent",
            # HR 0.77) is not the study's when its primary outcome did not differ (HR 0.90, 0.76 to 1.06; p = 0.21),
            # nor is a conclusion the reader is unsure of ("improved depressive symptoms", 0.46) when the primary
            # measure's own sentence states it ("BDI-II scores fell ... (difference -4.7 ...; p=0.004)").
            again = self.result_reader.read(primary, comparison, min_evidence_probability=0.0)
            reading = again if _states(again) else reading
        if (
            _states(reading)
            and reading.label != "no_difference"
            and self._outcomes
            and not self._names_outcome(reading.evidence[0].text, item, composites=False)
        ):
            # A composite's significant result is not each of its parts': a trial whose composite of cardiovascular
            # death or hospitalisation fell (HR 0.79) but whose deaths did not ("all-cause mortality was similar")
            # answers a mortality question by what it states for deaths, when it states it.
            clauses = self._outcome_itself(units, item)
            again = self.result_reader.read(list(clauses), comparison, min_evidence_probability=0.0)
            if again.label is not None and _states(again) and again.probabilities[again.label] >= SURE_OF_A_PART:
                # Read from the clause; quoted as the whole sentence it is in.
                whole = list(dict.fromkeys(clauses[clause] for clause in again.evidence))
                reading = replace(again, evidence=whole)
        if self._control_first and reading.label is not None:
            reading = replace(
                reading, label=_OTHER_WAY[reading.label], probabilities=turned_probabilities(reading.probabilities)
            )
        if not _states(reading) or (
            reading.label == "no_difference" and not _states_no_difference(reading.evidence[0].text)
        ):
            return StudyReading(None, reading)
        sentence = reading.evidence[0].text
        direction: Direction = "null"
        if reading.label != "no_difference":
            wanted = favourable_movement(self.question, sentence)
            direction = "favourable" if reading.label == wanted else "unfavourable"
            # A sentence that judges the change itself ("FACIT-Fatigue *improved* by 6.8 points": a higher score is
            # less fatigue) says which way is better, whichever way the measure's scale runs.
            direction = judged_change(sentence) or direction
        if not self.on_outcome(sentence, item) or (self._open and not _tests_an_intervention(item)):
            # An open question asks which intervention: a study that tests none ("Reduced circulating serotonin
            # after SARS-CoV-2 infection is associated with ... fatigue") states no result on it.
            return StudyReading(None, reading, other_outcome=direction)
        return StudyReading(direction, reading, self._direct(sentence, item))


def _tests_an_intervention(item: EvidenceView) -> bool:
    """The study's title names an intervention as its subject, or any drug or treatment (a harm of one)."""
    return intervention_of(item) is not None or names_a_treatment(item.title)


# A structured abstract's sections that state no result of the study's own; not "METHODS AND RESULTS" (Circulation's,
# the European Heart Journal's) nor "METHODS AND FINDINGS" (PLOS Medicine's), which hold the results.
_NO_RESULT_UNIT = re.compile(
    r"^(?:ABSTRACT\.|BODY\.)?(?:BACKGROUND|INTRODUCTION|CONTEXT|RATIONALE|OBJECTIVES?|AIMS?|PURPOSE|HYPOTHES\w*"
    r"|(?:MATERIALS?|PATIENTS|SUBJECTS)?\s*(?:AND\s+)?METHODS?(?!\s+AND\s+(?:RESULTS?|FINDINGS?)\b)|DESIGN|SETTING"
    r"|PARTICIPANTS|INTERVENTIONS?|STUDY DESIGN)\b"
)


def results_units(units: list[TextUnit]) -> list[TextUnit]:
    """The units that may state the study's result: not under a background, objective or methods label, not
    a sentence that says what the study did or only speculates (``reading.NOT_A_RESULT``); all of them when
    nothing else is left (an unlabelled text is read whole)."""
    kept = [u for u in units if not _NO_RESULT_UNIT.match(u.section) and not NOT_A_RESULT.search(u.text)]
    return kept or units


# What a trial measured or compared, said in its methods: "The primary endpoint was histologically confirmed breast
# cancer", "Main outcome measures were overall survival", "Prevalence and anaemia were compared between study arms
# using three surveys". Such a sentence states no result unless it also says how the arms compared.
_MEASURED = re.compile(
    r"^(?:the\s+)?(?:(?:co-?)?(?:primary|secondary|main|principal)\s+)?(?:\w+\s+)?(?:outcome|end-?point)s?"
    r"(?:\s+measures?)?\s+(?:was|were|is|are|included|comprised|consisted)\b"
    r"|\b(?:was|were)\s+(?:\w+ly\s+)?(?:compared|recorded|assessed|measured|evaluated|monitored|collected|followed"
    r"|documented|analy[sz]ed)\b",
    re.IGNORECASE,
)
# How a sentence says the arms compared: a finding's words, a comparison between them, a p-value or an interval.
_ARMS_COMPARED = re.compile(
    r"\b(?:signific\w*|differ\w*|similar\w*|reduc\w*|increas\w*|decreas\w*|lower|higher|fewer|more|less|greater"
    r"|improv\w*|worse\w*|better|unchanged|than|vs|versus|compared (?:with|to)|superior|inferior|equivalent)\b"
    r"|\bp\s*[<=>≤≥]|\bCI\b|confidence interval",
    re.IGNORECASE,
)
# How a sentence states no difference: in words ("no significant difference", "did not differ", "similar"), with a
# p-value or an interval, or with each arm's figure.
_NO_DIFFERENCE_STATED = re.compile(
    r"\bno\b|\bnot\b|n[o']t\b|non-?significant|similar|comparab|unchanged|neither|\bnor\b|failed|\bsame\b"
    r"|equivalen|\bp\s*[<=>≤≥]|\bCI\b|confidence interval|\d\s*%|\d[.·]\d+\b.*\d[.·]\d+\b",
    re.IGNORECASE,
)


# A study's aim, which names the effect it looks for ("To investigate whether ablation increases healing rates"):
# no finding, whatever its verbs.
_AIM = re.compile(
    r"^(?:to\s+(?:investigate|assess|evaluate|compare|determine|examine|test|study|explore|establish|describe"
    r"|estimate|measure|identify|analy[sz]e|clarify)\b|(?:the|our)\s+(?:\w+\s+)?(?:aim|objective|purpose|goal)s?"
    r"\s+(?:of\s+(?:this|the)\s+\w+\s+)?(?:was|were|is|are)\s+to\b)",
    re.IGNORECASE,
)


def _says_what_was_measured(sentence: str) -> bool:
    """The sentence states the study's aim, or what it measured or compared and not how the arms compared."""
    return bool(_AIM.search(sentence)) or (bool(_MEASURED.search(sentence)) and not _ARMS_COMPARED.search(sentence))


def _states_no_difference(sentence: str) -> bool:
    """The sentence states a lack of difference: in words, with a statistic or with each arm's figures (a sentence
    on why the question matters, read as no difference, states none)."""
    return bool(_NO_DIFFERENCE_STATED.search(sentence))


def _states(reading: ResultReading) -> bool:
    """The reading states a comparative result, surely enough to count."""
    return (
        reading.label is not None
        and reading.probabilities[reading.label] >= MIN_LABEL_PROBABILITY
        and bool(_STATES_A_RESULT.search(reading.evidence[0].text))
    )


READING_FEATURES = (
    "reader_change",
    "reader_no_difference",
    "reader_states",
    "reader_favourable",
    "reader_unfavourable",
    "reader_asks_effect",
    "reader_evidence",
)


def reading_features(question: str, text: str, reader: StudyReader | None = None) -> list[float]:
    """What the result reader reads in ``text`` for the question's comparison, as features of the stance
    model (``appraisal.stance``; ``READING_FEATURES``): the probability of a significant change either way and,
    when a result is stated, of no difference; whether it states one; the probability that the change is the
    one the question asks for, and the opposite; whether the question asks a treatment's effect; how surely
    the sentence relied on states the result. The stance model learns what these mean for an answer (a
    PubMedQA "yes" is often "there is an effect", either way). ``reader``: the run's reader of this question's
    studies (else the linear one)."""
    reader = reader or StudyReader(question)
    reading = reader.result_reader.read(
        results_units(split_units(text, "")), reader.comparison, min_evidence_probability=0.0
    )
    probabilities = reading.probabilities or dict.fromkeys(("increased", "decreased", "no_difference"), 0.0)
    states = _states(reading)
    favourable = unfavourable = 0.0
    if states and reading.label != "no_difference":
        wanted = favourable_movement(question, reading.evidence[0].text)
        favourable = probabilities[wanted]
        unfavourable = probabilities["increased" if wanted == "decreased" else "decreased"]
    return [
        probabilities["increased"] + probabilities["decreased"],
        probabilities["no_difference"] if states else 0.0,
        float(states),
        favourable,
        unfavourable,
        float(reader.asks_effect),
        reading.evidence_probability,
    ]
