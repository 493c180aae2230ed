"""Reading evidence text in code, with a small, inspectable, generic vocabulary: a question's key terms,
the sentence that states an item's result and whether it reads contrary, and which aspects (mechanism,
clinical, safety) a text covers. The code-built assessment and the extractive report both read with it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.evidence.retrieval import english_stemmer
from deepcritical.questions import STOPWORDS, WORD, stem
from deepcritical.text import collapse_whitespace, split_sentences
from deepcritical.vocabulary import Direction

# Wording of harm: a sentence whose main claim is that the intervention does damage reads contrary.
# A small vocabulary on purpose; "increases ... risk/generation/accumulation" stays within one clause.
_HARM = (
    r"|harmful|detrimental|deleterious|worsen\w*|exacerbat\w*|toxic\b"
    r"|(?:increas|rais|promot|enhanc)\w*\b[^.;,]{0,60}?\b(?:risk|generation|accumulation|deposition|aggregation)"
)
CONTRARY = re.compile(
    r"\b(?:no (?:statistically )?significant|not (?:statistically )?significant\w*|no longer significant"
    r"|non-?significant|(?:did|does|do) not (?:significantly )?"
    r"(?:improve|reduce|change|differ|affect|alter|slow|lower|show|prevent|benefit)"
    r"|(?:was|were) not associated|no association|no effect|no (?:[\w-]+ )?benefit|failed to|increased risk"
    r"|recommends? against"
    r"|higher risk|worse\w*|no difference|no improvement|insufficient evidence|inconsistent|unchanged" + _HARM + r")\b",
    re.IGNORECASE,
)
# Of the contrary wording, what says harm (rather than no effect): an unfavourable result, not a null one.
UNFAVOURABLE = re.compile(
    r"\b(?:increased risk|higher risk|worse\w*|adverse" + _HARM + r")\b",
    re.IGNORECASE,
)
# Wording of a favourable result. When a sentence has both kinds, what it says first is its main
# claim: "linked to a 16% lower risk ..., with no association in people with kidney disease" supports.
SUPPORTIVE = re.compile(
    r"\b(?:lower(?:ed)? (?:[\w-]+ ){0,2}?(?:risk|rates?|incidence|odds|mortality|deaths?)|reduc\w*|decreas\w*"
    r"|improv\w*|slow\w*|protect\w*|benefi\w*|attenuat\w*|prevent\w*|fewer (?:[\w-]+ ){0,2}?(?:events|deaths))",
    re.IGNORECASE,
)


# A favourable-sounding association that vanishes ("the apparent protective association largely
# disappears when ...") is a null result, wherever the favourable word stands.
VANISHING = re.compile(
    r"\b(?:(?:largely|completely|entirely) )?(?:disappear\w*|vanish\w*|(?:was|were) (?:fully )?explained by"
    r"|attenuated to (?:the )?null)\b",
    re.IGNORECASE,
)


def reads_contrary(sentence: str) -> bool:
    """Whether a sentence's main claim is a null, negative or unfavourable result."""
    if VANISHING.search(sentence):
        return True
    against = CONTRARY.search(sentence)
    if against is None:
        return False
    favourable = SUPPORTIVE.search(sentence)
    return favourable is None or against.start() <= favourable.start()


# Text that addresses a reader or a model instead of reporting something: never evidence of anything.
INSTRUCTION = re.compile(
    r"\b(?:ignore (?:all |any |the )?(?:previous|prior|above)|you (?:must|should|are required to|are an?)\b"
    r"|(?:system|assistant|user)\s*:|instructions?\b|disregard|language model|report that)",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"^([A-Z][A-Z /&]{2,40}|Background|Objectives?|Aims?|Purpose|Methods?|Design|Setting|Results?|Findings"
    r"|Conclusions?|Interpretation|Discussion|Significance):\s+"
)
_CONCLUSION_LABEL = re.compile(r"conclu|interpret", re.IGNORECASE)
# Labels of the parts of a structured abstract that state no result of the study's own.
_NO_RESULT_LABEL = re.compile(
    r"background|introduction|context|rationale|objectives?|aims?|purpose|methods?|design|setting|participants"
    r"|patients|interventions?|materials|study selection|data sources|eligibility",
    re.IGNORECASE,
)
# The sentence's start states no finding before its background or may-be-used wording: "... was associated with a
# lower risk of dementia (HR 0.76) and may be considered in their care" states its result first, then advises.
_NO_FINDING_BEFORE = (
    r"^(?:(?!\b(?:associated|reduc\w*|lower\w*|higher|increas\w*|decreas\w*|improv\w*|significant\w*|differ\w*"
    r"|p\s*[<=>])).)*?"
)
# A sentence that says what the study did (methods) or what might explain something (speculation, background),
# not what it found: "We pooled five trials ...", "These effects may contribute to ...", "... is the rationale
# for testing statins". Never quoted as a study's result.
NOT_A_RESULT = re.compile(
    r"^(?:we|the authors|investigators) (?:\w+ ){0,2}?(?:pooled|searched|included|enrolled|recruited|randomi[sz]ed"
    r"|randomly assigned|assigned|conducted|performed|designed|aimed|sought|set out|hypothesi[sz]ed|investigated"
    r"|examined|assessed|analy[sz]ed|measured|compared|used|identified|extracted|collected)\b"
    r"|^(?:participants|patients|subjects|adults|children|women|men|volunteers|mice|rats)\b[^.;]{0,80}?"
    r"\b(?:were|was) (?:randomi[sz]ed|randomly assigned|assigned|enrolled|recruited|included|allocated)\b"
    r"|\b(?:may|might|could) (?:\w+ ){0,2}?(?:contribute|explain|underlie|account for|mediate|be responsible"
    r"|play a role|reflect|be due)\b"
    r"|\brationale\b|\bhypothes[ie]s\b|\b(?:is|are) (?:thought|believed|proposed) to\b"
    # a hedged claim of effect as the sentence's own statement ("Vitamin D may modestly reduce symptoms"; not a
    # result stated first, a speculation after a comma: "X dampens Y, by which it might protect cognition")
    r"|^[^,;:]*?\b(?:may|might|could)\s+(?:\w+ly\s+|also\s+|even\s+)?(?:reduce|decrease|lower|improve|increase"
    r"|raise|help|benefit|protect|prevent|slow|delay|enhance|prolong|be (?:beneficial|effective|useful|protective"
    r"|associated))\b"
    r"|\b(?:it is|it remains) (?:plausible|possible|unknown|unclear) (?:that|whether)\b"
    # background: why the question is asked, or how a drug might come to be used ("Interest in metformin as a
    # candidate treatment ... means it may be given to older people without diabetes")
    r"|^interest in\b|" + _NO_FINDING_BEFORE + r"(?:\b(?:growing|increasing|renewed|recent) interest\b"
    r"|\b(?:may|might|could) be (?:given|used|prescribed|offered|considered|tried|repurposed)\b)"
    # advice on care or on reading the study: "should monitor B12", "should be interpreted with caution"
    r"|\b(?:should|must) (?:\w+ ){0,3}?(?:monitor|screen|check|replace|measure|be (?:monitored|screened|checked"
    r"|measured|interpreted|confirmed|replicated))\b",
    re.IGNORECASE,
)
# Wording of a reported result, null results ("did not change", "did not differ", "unchanged") included.
_RESULT = re.compile(
    r"\b(?:conclu\w*|result\w*|suggest\w*|show\w*|found|find\w*|associated|reduc\w*|improv\w*|increas\w*"
    r"|decreas\w*|lower\w*|higher|demonstrat\w*|indicat\w*|significant\w*|protect\w*|benefit\w*"
    r"|change[ds]?|unchanged|differ(?:ed|ence|ences)?|similar|harm\w*|detrimental|worsen\w*)\b",
    re.IGNORECASE,
)


def labelled_sentences(text: str, *, results_only: bool = False) -> list[tuple[str, bool]]:
    """Sentences that report something, each with whether it sits under a "CONCLUSIONS:"-like label:
    section labels removed, and sentences that read as instructions (to a reader or a model) left out.
    With ``results_only``, also the sentences under a background or methods label and those that say what
    the study did or what might explain something (``NOT_A_RESULT``): what is left may state a result."""
    parts: list[tuple[str, bool]] = []
    in_conclusion = no_result = False
    for raw in split_sentences(collapse_whitespace(text)):
        if label := _LABEL.match(raw):
            in_conclusion = bool(_CONCLUSION_LABEL.match(label.group(1)))
            name = label.group(1)
            no_result = bool(_NO_RESULT_LABEL.search(name)) and not re.search(r"result|finding|conclu", name, re.I)
        sentence = _LABEL.sub("", raw).strip()
        if results_only and (no_result or NOT_A_RESULT.search(sentence)):
            continue
        if 30 <= len(sentence) <= 500 and not sentence.endswith("…") and not INSTRUCTION.search(sentence):
            parts.append((sentence, in_conclusion))
    return parts


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that report something (``text.split_sentences`` keeps every one)."""
    return [sentence for sentence, _ in labelled_sentences(text)]


def _rank(sentence: str, stems: Sequence[str]) -> int:
    lowered = sentence.lower()
    return 2 * bool(_RESULT.search(sentence)) + sum(term in lowered for term in stems)


def best_sentence(candidates: Sequence[str], stems: Sequence[str]) -> str | None:
    """The candidate that best states a result about the question, if any states one. On a tie the later
    sentence wins: abstracts state their results after their background."""
    ranked = sorted(enumerate(candidates), key=lambda pair: (-_rank(pair[1], stems), -pair[0]))
    return ranked[0][1] if ranked and _rank(ranked[0][1], stems) >= 2 else None


@dataclass(frozen=True)
class Quote:
    sentence: str
    contrary: bool


def quote(item: EvidenceView, stems: Sequence[str]) -> Quote | None:
    """The sentence that states an item's result, and whether it reads contrary. A structured abstract's
    conclusions speak for it when one of them states a result; else a title whose claim is contrary
    ("Metformin increases ... amyloid-β generation") files the text's best sentence as contrary, as the text
    may be cut before its conclusions (the title itself is never quoted); else any contrary result wins, as
    one null finding is easily outnumbered by favourable-sounding ones."""
    # Advice ("a randomised trial is required") is never an item's result: such clauses are dropped first. Nor
    # is the title that a record without an abstract carries as its text ("X for Y: promising signals").
    labelled = [
        (found, concluding)
        for s, concluding in labelled_sentences(item.text, results_only=True)
        if (found := result_only(s)) and not is_title(s, item.title)
    ]
    every = [s for s, _ in labelled]
    conclusions = [s for s, concluding in labelled if concluding]
    for contrary in (True, False):
        if found := best_sentence([s for s in conclusions if reads_contrary(s) == contrary], stems):
            return Quote(found, contrary)
    if reads_contrary(item.title) and best_sentence([item.title], stems):
        # The title places the item; a sentence of its text is quoted, never the title itself (a title is
        # a claim, not a result), and an item with no such sentence is not quoted at all.
        found = best_sentence(every, stems)
        return Quote(found, contrary=True) if found else None
    for contrary in (True, False):
        if found := best_sentence([s for s in every if reads_contrary(s) == contrary], stems):
            return Quote(found, contrary)
    return None


def is_title(sentence: str, title: str) -> bool:
    """Whether ``sentence`` is the item's title (case, spacing and a final full stop aside): a record without
    an abstract carries its title as its text, and a title is a claim, never quoted as a result."""
    return _bare(sentence) == _bare(title)


def _bare(sentence: str) -> str:
    return collapse_whitespace(sentence.lower()).rstrip(" .")


def context_terms(context: str, exclude: Iterable[str], n: int = 2) -> list[str]:
    """The most frequent technical-looking terms of a background text that a query does not already use."""
    excluded = {stem(term) for term in exclude}
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for word in WORD.findall(context):
        key = stem(word)
        if len(key) < 4 or key in STOPWORDS or key in excluded or key.isdigit():
            continue
        technical = any(char.isupper() for char in word[1:]) or any(char.isdigit() for char in word)
        counts[key] += 3 if technical else 1
        shown.setdefault(key, word)
    return [shown[key] for key, count in counts.most_common() if count >= 2][:n]


def informative(text: str) -> str:
    """``text`` without the sentences that read as instructions rather than findings."""
    return " ".join(part for part in split_sentences(text) if not INSTRUCTION.search(part))


def direction(item: EvidenceView, stems: Sequence[str]) -> Direction | None:
    """Which way an item's result points, read from the sentence that states it: favourable, null (no
    effect, no difference) or unfavourable (harm, higher risk); None when no sentence states a clear result.
    A registry entry states plans, not results, so it has none."""
    if item.design == "registered_trial":
        return None
    found = quote(item, stems)
    if found is None:
        return None
    if found.contrary:
        # The first contrary claim decides: "did not change cognition; adverse events were common" is null.
        first = CONTRARY.search(found.sentence)
        harm = UNFAVOURABLE.search(found.sentence)
        if harm is not None and (first is None or harm.start() <= first.start()):
            return "unfavourable"
        return "null"
    return "favourable" if SUPPORTIVE.search(found.sentence) else None


_COMPOUND = re.compile(r"[-/]")
_TOKEN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def _root(word: str) -> str:
    # The stemmer the retrieval index uses: "protection" and "protective" share "protect". A new one per
    # miss: a stemmer is not made to be shared between threads.
    return str(english_stemmer().stemWord(word))


@lru_cache(maxsize=512)
def _word_roots(haystack: str) -> frozenset[str]:
    """The roots of the words of a lower-cased text."""
    return frozenset(_root(word) for word in _TOKEN.findall(haystack))


def mentions_stem(term: str, haystack: str) -> bool:
    """Whether the lower-cased ``haystack`` names the stemmed ``term``: as written, with its plural s folded
    ("statins", "statin"), as a word with the same root ("attenuation", "attenuated"; never a longer word
    that begins alike: "experience" is not "experimental"), or a compound by every part as such a word
    ("reperfusion-induced"; "non-diabetic" is not named by "none" and "diabetic")."""
    if term in haystack or (len(term) > 4 and term.endswith("s") and term[:-1] in haystack):
        return True
    roots = _word_roots(haystack)
    parts = [part for part in _COMPOUND.split(term) if part]
    return bool(parts) and all(_root(part) in roots for part in parts)


def share_named(stems: Sequence[str], text: str) -> float:
    """The share of ``stems`` (key terms, stemmed) that ``text`` names; 1 when there are none."""
    if not stems:
        return 1.0
    haystack = text.lower()
    return sum(mentions_stem(term, haystack) for term in stems) / len(stems)


def is_relevant(item: EvidenceView, stems: Sequence[str]) -> bool:
    """The item names the question's first key term, or at least two thirds of them."""
    if not stems:
        return True
    haystack = f"{item.title} {item.text}".lower()
    hits = [mentions_stem(term, haystack) for term in stems]
    return hits[0] or sum(hits) >= 2 * len(stems) / 3


# Wording of advice, a plan, a call for more research or a caveat about interpretation: what a reader
# should do or cannot conclude, not what a study found. Such a clause is never quoted as a finding.
ADVICE = re.compile(
    r"\b(?:(?:is|are|was|were|remains?|seems?) (?:still |now |urgently |clearly )?"
    r"(?:required|needed|warranted|necessary|recommended|advised|advisable|indicated)"
    r"|should|must|ought to|recommend\w*|advis(?:e|es|ed|ing)\b|we (?:suggest|propose|continue|hold|start|stop|use"
    r"|prefer|do not start|would)"
    r"|(?:further|future) (?:\w+ ){0,2}?(?:research|studies|trials|work|investigation)"
    r"|(?:warrants?|merits?|needs?|requires?|deserves?) (?:\w+ ){0,2}?"
    r"(?:confirmation|replication|validation|investigation|study)"
    r"|cannot be (?:interpreted|drawn|concluded|recommended)|no conclusions? can"
    r"|remains? (?:unclear|uncertain|unknown|to be (?:seen|determined|established)))\b",
    re.IGNORECASE,
)
# "Choosing rosuvastatin ... may reduce harm": a course of action, led by what to do, hedged by a modal.
_PRESCRIPTIVE = re.compile(
    r"^(?:choos|monitor|avoid|consider|hold|switch|prescrib)\w*\b[^.;]*?"
    r"\b(?:may|might|could|can|should)\b",
    re.IGNORECASE,
)
# Clauses end at a semicolon, a sentence's end, before advice joined by "and" ("... reduce deaths and
# should be considered foundational therapy": the result stands without the advice), or before an appraisal
# set after a comma ("... reduced postpartum depression, a finding that warrants confirmation in ...").
_CLAUSES = re.compile(
    r"(;\s+|(?<=[.!?])\s+|,?\s+(?=and (?:should|must|ought to)\b)"
    r"|,\s+(?=(?:a|an|which is a) (?:finding|result|observation|association|effect) that\b))"
)


def is_advice(clause: str) -> bool:
    """Whether a clause tells a reader what to do or what cannot be concluded, rather than reporting a result."""
    text = clause.strip()
    return bool(ADVICE.search(text) or _PRESCRIPTIVE.search(text))


def result_only(statement: str) -> str | None:
    """``statement`` without its clauses (split at semicolons and sentence ends) that give advice, or None
    when nothing else is left: "X was associated with lower mortality; a trial is warranted." keeps "X was
    associated with lower mortality". What is kept is verbatim, so a quote stays a quote."""
    flat = collapse_whitespace(statement)
    parts = _CLAUSES.split(flat)  # clause, separator, clause, ...
    clauses = parts[0::2]
    separators = [*parts[1::2], ""]
    kept = [(clause, separator) for clause, separator in zip(clauses, separators, strict=True) if clause.strip()]
    if all(not is_advice(clause) for clause, _ in kept):
        return flat or None
    text = "".join(clause + separator for clause, separator in kept if not is_advice(clause)).strip().rstrip(";,")
    return text or None
