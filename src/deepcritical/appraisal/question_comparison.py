"""What a question asks of each study it is answered from: its comparison (the intervention, the comparator
and the outcome, ``question_comparison``), which way it wants the outcome to move (``favourable_movement``),
whether it asks a treatment's effect (``asks_effect``), and the words that say a sentence is on a clinical
outcome or a study's people are not the question's. ``study_reading`` reads each study with these."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from deepcritical.reading.comparison import Comparison, stems
from deepcritical.reading.frame import plain_question

Movement = Literal["increased", "decreased"]

_AUXILIARY = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must)\b\s*", re.I
)
# The question's wording of the effect it asks about: which way it wants the outcome to move.
_ASKS_DOWN = re.compile(
    r"\b(?:reduc\w*|decreas\w*|lower\w*|prevent\w*|slow\w*|protect\w*|delay\w*|shorten\w*|less|fewer)\b", re.I
)
_ASKS_PREVENTION = re.compile(r"\bprevent\w*|\bprophyla\w*|\bincidence\b|\brisk of\b", re.I)
_ASKS_UP = re.compile(r"\b(?:increas\w*|rais\w*|enhanc\w*|prolong\w*|boost\w*|higher|longer)\b", re.I)
# "Does X reduce Y in Z?": the effect verb splits the intervention from the outcome.
# Not inside a hyphenated word: "insecticide-treated nets" names nets, "treated" is no effect verb there.
_EFFECT_VERB = re.compile(
    r"(?<![\w-])(?:reduc|decreas|lower|prevent|slow|protect|increas|improv|rais|enhanc|prolong|affect|influenc|alter"
    r"|chang|caus|treat|cure|help|benefit|worsen|delay|repurpos)\w*\b",
    re.IGNORECASE,
)
_COMPARATOR = re.compile(r"\b(?:than|versus|vs\.?|compared (?:with|to))\s+(.+)$", re.IGNORECASE)
# Outcomes whose decrease is good, and outcomes whose increase is good (as a sentence names them). Cognitive
# scales point both ways: a higher ADAS-Cog is more impairment, a higher MMSE or MoCA is better cognition.
_BAD_OUTCOME = re.compile(
    r"\b(?:mortality|deaths?|died|dying|events?|hospitali[sz]\w*|admissions?|readmissions?|risk|incidence|pain"
    r"|adverse|fractures?|falls?|relapses?|recurrences?|progression|declines?|symptoms?|depressi\w*|anxiety"
    r"|infections?|complications?|failure|exacerbations?|bleeding|ha?emorrhage|strokes?|infarctions?|toxicit\w*"
    r"|severity|burden|length of stay|duration|dementia|disability|amyloid|inflammat\w*|hba1c|glucose"
    r"|blood pressure|worsening|deteriorat\w*|adas-cog\w*)\b",
    re.IGNORECASE,
)
_GOOD_OUTCOME = re.compile(
    r"\b(?:survival|surviv\w*|response|remission|quality of life|qol|function(?:ing)?|cognition|cognitive (?:score|"
    r"performance)|recovery|healing|success\w*|well-?being|improvement|efficacy|cure|abstinence|mmse|moca"
    r"|montreal cognitive assessment)\b",
    re.IGNORECASE,
)
# "Of" starts the population only when people follow ("mortality of patients with sepsis"): "the risk of
# developing tuberculosis", "the length of hospital stay" are one outcome.
_PEOPLE = (
    r"(?:the\s+)?(?:\w+\s+){0,3}?(?:patients|people|adults|children|women|men|infants|subjects|individuals"
    r"|participants|elderly|older|those|\w+ with)\b"
)
_POPULATION = re.compile(rf"\s(?:(?:in|among|for)\s+(?={_PEOPLE}|\s*\w)|of\s+(?={_PEOPLE}))", re.I)
# Words a question uses for "any clinical outcome" ("clinical outcome", "overall outcome"): a sentence naming a
# clinical outcome answers it.
ANY_OUTCOME = frozenset(
    {"outcom", "benefit", "effect", "efficaci", "result", "prognosi", "endpoint", "clinic", "overal"}
    | {"protect", "improv", "advantag", "valu", "option", "adjuv", "altern"}  # frame.GENERIC_OUTCOMES
)
_ASKS_MORE = re.compile(r"\b(?:improv\w*|better|enhanc\w*)\b", re.IGNORECASE)
_BETTER = re.compile(r"\b(?:improv\w*|better|benefi\w*)\b", re.IGNORECASE)
_WORSE = re.compile(r"\b(?:worse\w*|worsen\w*|deteriorat\w*|harm\w*)\b", re.IGNORECASE)
# A question about what a treatment does ("Do statins reduce mortality?", "Can metformin be repurposed for
# Alzheimer's disease?"), as opposed to an association, a prediction or a test's accuracy ("Is X associated
# with Y?", "Does X predict Y?"), whose "yes" is any effect, in either direction.
_TREATMENT_EFFECT = re.compile(
    r"\b(?:reduc|decreas|lower|prevent|slow|protect|increas|improv|rais|enhanc|prolong|treat|cure|help|benefit"
    r"|delay|repurpos|shorten|effective|efficac)\w*",
    re.IGNORECASE,
)
_ASSOCIATION = re.compile(
    r"\b(?:associat|predict|correlat|relat|risk factor|determin|accura|diagnos|marker|indicat)\w*", re.IGNORECASE
)
# Those words inside the name of a condition or of its people ask no association: "sepsis-associated ARDS",
# "ventilator-associated pneumonia", "ICU-related weakness", "newly diagnosed type 2 diabetes". (On PubMedQA's 500
# dev questions this changes one: "Aromatase inhibitor-related musculoskeletal symptoms: is preventing ...?") The
# hyphen may be a typeset one (U+2010, U+2011: "COVID‐related absenteeism").
_IN_A_NAME = re.compile(
    r"\w[-\u2010\u2011](?:associat|relat)\w*|\b(?:newly|recently|previously|clinically|first)[ -]diagnosed\b",
    re.IGNORECASE,
)
# Healthy people answer a question about patients only indirectly.
HEALTHY_VOLUNTEERS = re.compile(r"\bhealthy (?:volunteers?|subjects|participants|adults|men|women)\b", re.I)
# Outcomes a sentence names in other words: "died" and "survival" report mortality.
SAME_OUTCOME: dict[str, frozenset[str]] = {
    "mortal": frozenset({"death", "die", "dead", "surviv", "fatal", "mortal"}),
    "death": frozenset({"death", "die", "dead", "surviv", "fatal", "mortal"}),
    "surviv": frozenset({"death", "die", "dead", "surviv", "fatal", "mortal"}),
}


def asks_effect(question: str) -> bool:
    """Whether the question asks a treatment's effect (what the verdict reads counted studies' results for);
    an association, prediction or test question is read by the stance model (``appraisal.stance.code_verdict``)."""
    return bool(_TREATMENT_EFFECT.search(question)) and not _ASSOCIATION.search(_IN_A_NAME.sub(" ", question))


def names_clinical_outcome(text: str) -> bool:
    """Whether ``text`` names a clinical outcome, one whose decrease is good (mortality, fractures) or whose
    increase is (survival, remission)."""
    return bool(_BAD_OUTCOME.search(text) or _GOOD_OUTCOME.search(text))


def question_comparison(question: str) -> Comparison:
    """What each study is read for: the question's intervention (before its effect verb), its outcome
    (after it) and its comparator (after "than", "versus", "compared with"); the whole question for both
    when it has no effect verb."""
    text = _AUXILIARY.sub("", plain_question(question).strip().rstrip("?").strip()).strip()
    comparator = ""
    found = _COMPARATOR.search(text)
    if found:
        comparator, text = found.group(1), text[: found.start()]
    verb = _effect_verb_in(text)
    if verb is None or verb.start() == 0:
        return Comparison.of(text, comparator, text)
    # "mortality in sepsis", "fractures in older adults": what follows "in" or "among" is the population.
    # Unless the outcome is only a word for any outcome ("outcomes in heart failure"): then the population
    # is what the results name.
    rest = text[verb.end() :]
    outcome = _POPULATION.split(rest, maxsplit=1)[0].strip()
    if not outcome or set(stems(outcome)) <= ANY_OUTCOME:
        outcome = rest
    return Comparison.of(text[: verb.start()], comparator, outcome)


def _effect_verb(question: str) -> str:
    """The question's effect verb ("reduce" in "Do statins reduce mortality?"), as ``question_comparison``
    finds it; empty when it has none."""
    text = _AUXILIARY.sub("", question.strip().rstrip("?").strip()).strip()
    if found := _COMPARATOR.search(text):
        text = text[: found.start()]
    verb = _effect_verb_in(text)
    return verb.group(0) if verb is not None and verb.start() > 0 else ""


# An open question's head ("What treatments", "Which therapies") asks which intervention: no effect verb.
_OPEN_HEAD = re.compile(r"^(?:what|which)(?:\s+\w+)?\s*$", re.IGNORECASE)


def _effect_verb_in(text: str) -> re.Match[str] | None:
    """The first effect verb of ``text`` that is not the noun of an open question's head ("What *treatments*
    reduce fatigue?": "reduce")."""
    return next((verb for verb in _EFFECT_VERB.finditer(text) if not _OPEN_HEAD.match(text[: verb.end()])), None)


def asks_direction(question: str) -> bool:
    """Whether the question's effect verb asks for a direction ("reduce", "increase", "prevent"), not a benefit
    ("improve outcomes", "help", "be repurposed for")."""
    verb = _effect_verb(question)
    return bool(_ASKS_DOWN.search(verb)) != bool(_ASKS_UP.search(verb))


def favourable_movement(question: str, sentence: str) -> Movement:
    """Which way the outcome must move for the result to answer the question favourably: the way its effect
    verb asks ("reduce", "increase"; a direction word elsewhere is not the outcome's: "treated with *higher*
    doses", "quality of *preventive* care"), else the sentence's verb of change, else the outcome's polarity."""
    verb = _effect_verb(question)
    down, up = bool(_ASKS_DOWN.search(verb)), bool(_ASKS_UP.search(verb))
    if down != up:
        return "decreased" if down else "increased"
    # A sentence whose own verb says the change is for the better ("improved memory recall") or worse.
    better, worse = _BETTER.search(sentence), _WORSE.search(sentence)
    if better and not worse:
        return "increased"
    if worse and not better:
        return "decreased"
    bad, good = _BAD_OUTCOME.search(sentence), _GOOD_OUTCOME.search(sentence)
    if bad and (not good or bad.start() < good.start()):
        return "decreased"
    if good:
        return "increased"
    bad, good = _BAD_OUTCOME.search(question), _GOOD_OUTCOME.search(question)
    if good and not bad:
        return "increased"
    if bad and not good:  # "improve outcomes in heart failure": the outcomes are its events
        return "decreased"
    # Else what a study of a treatment measures is mostly what the condition does (risk, pathology,
    # symptoms): less of it is favourable, unless the question asks for more of something.
    return "increased" if _ASKS_MORE.search(question) else "decreased"


def judged_change(sentence: str) -> Literal["favourable", "unfavourable"] | None:
    """Whether a sentence that reports a change calls it better ("improved") or worse ("worsened"), whichever
    way its measure moved; None when it says neither, or both."""
    better = _judges(_IMPROVED, sentence) or _judges(_SLOWED, sentence)
    # "slower deterioration" judges the change better: its "deterioration" is not a change for the worse.
    worse = _judges(_WORSENED, _SLOWED.sub(" ", sentence), _LESSENED) or _judges(_HASTENED, sentence, _DESCRIBED)
    if better == worse:
        return None
    return "favourable" if better else "unfavourable"


# The verbs that judge a change ("improved", "worsened"); "benefit" and "harm" are too often a noun of something
# else ("no mortality benefit was shown").
_IMPROVED = re.compile(r"\bimprov\w*", re.IGNORECASE)
_WORSENED = re.compile(r"\b(?:worsen\w*|deteriorat\w*)", re.IGNORECASE)
# A decline or progression that slowed is a change for the better, whichever way the measure moved ("a slower
# decline in a composite memory score (difference 0.05 SD per year)": the score went up, the decline down); one
# that quickened is a change for the worse. ("Loss" is not among them: a slower weight loss is not always better.)
_SLOWED = re.compile(
    r"\b(?:slow\w*|less|attenuat\w*|delay\w*)\s+(?:\w+\s+)?(?:decline|progression|deterioration)\b", re.IGNORECASE
)
_HASTENED = re.compile(
    r"\b(?:fast\w*|quick\w*|accelerat\w*|more\s+rapid|rapid\w*)\s+(?:\w+\s+)?(?:decline|progression|deterioration)\b",
    re.IGNORECASE,
)
# A worsening that was reduced or prevented is the outcome, not a change for the worse: "Dapagliflozin reduced
# worsening heart failure and cardiovascular death". Not across a conjunction: in "HbA1c decreased and worsening
# of renal function occurred" the worsening is a change for the worse.
_LESSENED = re.compile(
    r"\b(?:reduc\w*|lower\w*|prevent\w*|decreas\w*|fewer|less|avert\w*)\s+"
    r"(?:(?!(?:and|but|or|while|whereas|yet|then|although|though)\b)\w+\s+)?$",
    re.IGNORECASE,
)
# A pace of decline that describes who was studied ("patients with rapid progression improved") judges no change.
_DESCRIBED = re.compile(r"\bwith\s+(?:a\s+)?$", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|no|nor|without|never|neither)\s+(?:\w+\s+)?$", re.IGNORECASE)


def _judges(verb: re.Pattern[str], sentence: str, undone: re.Pattern[str] | None = None) -> bool:
    """The sentence uses ``verb`` unnegated ("improved", not "did not improve", "without worsening"), nor after
    words that undo it (``undone``: "reduced worsening heart failure" names what was reduced)."""
    return any(
        not _NEGATED.search(before) and not (undone and undone.search(before))
        for found in verb.finditer(sentence)
        for before in [sentence[: found.start()]]
    )


# Subtypes of one condition that a trial enrols apart, each with the names studies give it: a trial in one answers a
# question about another only indirectly (an HFrEF trial on an HFpEF question).
SUBTYPES: tuple[tuple[tuple[str, str], ...], ...] = (
    (
        ("preserved ejection fraction", r"preserved (?:left ventricular )?ejection fraction|HFpEF"),
        ("reduced ejection fraction", r"(?<!mildly )reduced (?:left ventricular )?ejection fraction|HFrEF"),
    ),
    (
        ("type 1 diabetes", r"type (?:1|I)\b[\w\s]{0,15}diabet|T1DM?\b"),  # "type 1 or type 2 diabetes" names both
        ("type 2 diabetes", r"type (?:2|II)\b[\w\s]{0,15}diabet|T2DM?\b"),
    ),
)


def other_subtype(question: str, text: str) -> str | None:
    """The subtype ``text`` studies when the question names another of the same condition and ``text`` does not
    name the question's ("reduced ejection fraction" for a trial in HFrEF on an HFpEF question), else None."""
    for asked, subtypes in _asked_subtypes(question):
        named = [name for name, pattern in subtypes if pattern.search(text)]
        if named and asked not in named:
            return named[0]
    return None


@lru_cache(maxsize=64)
def _asked_subtypes(question: str) -> tuple[tuple[str, tuple[tuple[str, re.Pattern[str]], ...]], ...]:
    """Each condition of ``SUBTYPES`` the question names exactly one subtype of, with that subtype's name and every
    subtype's pattern (read once a question: a run reads the same question's studies many times)."""
    found = []
    for group in SUBTYPES:
        compiled = tuple((name, re.compile(rf"\b(?:{pattern})", re.I)) for name, pattern in group)
        asked = [name for name, pattern in compiled if pattern.search(question)]
        if len(asked) == 1:
            found.append((asked[0], compiled))
    return tuple(found)


def other_population(population: str | None, question: str) -> re.Pattern[str] | None:
    """Words that say a study's people do not have the question's condition: a trial "after acute myocardial
    infarction ... without known heart failure" is one of preventing heart failure, not of treating it, and
    answers a question about heart failure only indirectly (unless the question asks about preventing it)."""
    if not population or _ASKS_PREVENTION.search(question):
        return None
    name = r"\s+".join(re.escape(word) for word in population.split())
    return re.compile(
        rf"\b(?:without|free of|no)\s+(?:(?:known|prior|previous|pre-existing|a|history|of)\s+)*{name}"
        rf"|\b{name}\s+prevention\b|\b(?:prevent\w*|incident|new-onset)\s+(?:of\s+)?{name}",
        re.I,
    )
