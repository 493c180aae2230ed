"""The stance verdict, computed in code: what the collected items' results sentences say about a question
that the counted readings cannot answer (an association, a prediction, a test's accuracy; a claim; a pool
whose studies state no readable result), when no model gives the verdict (``--no-llm``, the demo, a run
whose model failed). ``appraisal.verdict`` decides when it is used.

Per item, the stance of its results toward the question (yes / no / maybe) comes from a small multinomial
logistic regression over lexical cue features of the item's results sentences (significance and null
wording, p-values, hedges, direction words), of the question (negation, comparison) and of what the result
reader reads in the item for the question's comparison (``study_reading.reading_features``). Its weights
(``verdict_model.json``, a few KB) were learned by ``training/verdict_model.py`` on PubMedQA's labelled
dev items (MIT licence), and its accuracy is reported there cross-validated: see
``phases/11_measured_answers.md``. SciFact (CC BY-NC, evaluation only) is never trained on.

Items are then pooled: each on-topic item's stance probabilities, weighed by how much of the question it
names and by its study design's level (OCEBM 2011), give the run's verdict. No on-topic item: insufficient.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import share_named
from deepcritical.appraisal.study_reading import READING_FEATURES, StudyReader, reading_features
from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import Verdict, VerdictLabel
from deepcritical.questions import key_terms, stem
from deepcritical.text import collapse_whitespace, quantity, split_sentences
from deepcritical.vocabulary import LAB_POPULATIONS, STANCE_LEVEL_WEIGHTS, STANCE_UNGRADED_WEIGHT

STANCES = ("yes", "no", "maybe")
WEIGHTS_FILE = "verdict_model.json"
METHOD = "code: per-item stance of the results sentences (logistic regression on cue features), weighed by design"
# An item is read only when it names more than a third of the question's key terms (0.34: one term of three,
# the drug alone, is not a study of the question). Why a third (set in round 11, measured since): on PubMedQA
# (bench/stance_coverage_gate.py, 500 questions against their own abstract and 20 others each) it turns away 11
# own abstracts (2.2 %) and lets in 1.0 % of other questions' abstracts; lower, the others come in fast (4.9 % at
# 0.25, 9.5 % at 0.2); higher, the own abstracts go (5 % at 0.5, 15 % at 0.6). Pooling weighs what passes by
# coverage ** COVERAGE_POWER, so the gate decides mostly whether a pool with nothing nearer the question is read
# at all or is insufficient.
MIN_COVERAGE = 0.34
# How sharply the pool leans on the items that name most of the question (coverage to this power). 8 since
# round 16's third part (4 before): PubMedQA cross-validated accuracy 0.590 at 4, 0.600 at 8, 0.598 at 16, a
# plateau (phases/16_result_reader.md, round 3).
COVERAGE_POWER = 8.0
# A claim ("X reduces Y in Z") is settled only by an item that names most of what it asserts; below this
# best coverage its verdict is insufficient. Not applied to yes/no questions: they are phrased in words of
# their own, and there the best item's coverage does not tell answerable from not (measured: see
# phases/11_measured_answers.md, where the threshold was read off the middle of a plateau of aggregate
# accuracy: 0.65 to 0.75 since a word is also named by another form of it, 0.55 to 0.65 before).
CLAIM_MIN_COVERAGE = 0.7
MAX_VERDICT_ITEMS = 5
# A pooled stance this weak, over counted results the brief calls mixed, is stated as mixed.
WEAK_LEAN = 0.5

_AUXILIARY = re.compile(
    r"^(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must)\b", re.IGNORECASE
)
_OPEN_QUESTION = re.compile(r"^(?:what|which|how|why|when|where|who|whom|whose)\b", re.IGNORECASE)
# A title-style question puts its topic first: "Double balloon enteroscopy: is it safe?".
_CLAUSE = re.compile(r"[:;,]|\s[-–—]\s")
_SECTION = re.compile(r"(?:^|(?<=[.!?]\s))([A-Z][A-Z /&]{2,40}):\s+")
_RESULTS_LABEL = re.compile(r"RESULT|FINDING|OUTCOME", re.IGNORECASE)
_METHOD_LABEL = re.compile(r"BACKGROUND|INTRODUCTION|OBJECTIVE|AIM|PURPOSE|METHOD|DESIGN|SETTING|PARTICIPANT", re.I)

_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "significant": r"(?<!not )(?<!no )(?<!non-)(?<!non)\bsignificant(?:ly)?\b",
        "not_significant": r"\b(?:no|not|non-?)\s?(?:statistically\s)?significant\w*|\bnonsignificant",
        "no_difference": r"\bno (?:significant )?(?:difference|change|association|correlation|effect|benefit|"
        r"improvement|relationship|increase|decrease)s?\b|\b(?:did|does|do|was|were) not\b|\bfailed to\b",
        "similar": r"\b(?:similar|comparable|equivalent|unchanged|not differ\w*|no differ\w*)\b",
        "p_small": r"\bp\s?(?:<|=|≤)\s?0?\.0[0-4]\d*|\bp\s?<\s?0?\.05\b|\bp\s?(?:<|=)\s?0?\.00",
        "p_large": r"\bp\s?(?:>|=|≥)\s?0?\.(?:0[5-9]|[1-9])\d*|\bn\.?s\.?\b",
        "hedge": r"\b(?:may|might|possibl\w*|trend\w*|tended|marginal\w*|borderline|unclear|inconclusive|limited"
        r"|controvers\w*|uncertain\w*|suggest\w*|appear\w*)\b",
        "contrast": r"\b(?:however|although|but|whereas|despite|nevertheless)\b",
        "increase": r"\b(?:increas\w*|higher|greater|elevat\w*|more)\b",
        "decrease": r"\b(?:decreas\w*|reduc\w*|lower\w*|less|fewer|declin\w*)\b",
        "improve": r"\b(?:improv\w*|benefi\w*|effective\w*|protect\w*|success\w*|better)\b",
        "harm": r"\b(?:worse\w*|adverse|harm\w*|complication\w*|toxic\w*|mortality|death\w*)\b",
        "association": r"\b(?:associat\w*|correlat\w*|predict\w*|related|risk factor\w*|odds ratio|hazard ratio)\b",
        "ci": r"\b(?:95\s?%\s?ci|confidence interval)\b",
        "percent": r"\d+(?:\.\d+)?\s?%",
        "negation": r"\b(?:no|not|none|neither|nor|without|absence|lack\w*)\b",
    }.items()
}
_QUESTION_CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "q_negation": r"\b(?:not|no|without|lack\w*|fail\w*|never|n't)\b",
        "q_comparison": r"\b(?:or|versus|vs\.?|compared|better|superior|inferior|than|differ\w*)\b",
        "q_predict": r"\b(?:predict\w*|associat\w*|correlat\w*|risk|factor\w*|related)\b",
        "q_effect": r"\b(?:improve\w*|reduce\w*|increase\w*|prevent\w*|effective|benefit\w*|help\w*|affect\w*)\b",
        "q_need": r"\b(?:necessary|needed|required|should|worth|justified|useful|safe|feasible|reliable|valid)\b",
    }.items()
}
_P_VALUE = re.compile(r"\bp\s?(<|=|>|≤|≥)\s?(0?\.\d+)", re.IGNORECASE)


def is_yes_no(question: str) -> bool:
    """A question answered by yes or no ("Does X reduce Y?", "Statins in sepsis: do they help?", "Aspirin
    after 70, worth it?"), rather than a claim to check (no question mark) or an open question ("What
    reduces Y?", "How does X work?")."""
    text = question.strip()
    if "?" not in text:
        return False
    clauses = [clause.strip() for clause in _CLAUSE.split(text.split("?")[0]) if clause.strip()]
    if any(_AUXILIARY.match(clause) for clause in clauses):
        return True
    return not any(_OPEN_QUESTION.match(clause) for clause in clauses)


def results_text(text: str) -> str:
    """The part of an abstract that states its results: its RESULTS-like sections when it is labelled, else
    the second half of its sentences (abstracts state results after background and methods)."""
    flat = collapse_whitespace(text)
    marks = list(_SECTION.finditer(flat))
    if marks:
        sections = [
            (match.group(1), flat[match.end() : marks[i + 1].start() if i + 1 < len(marks) else len(flat)])
            for i, match in enumerate(marks)
        ]
        chosen = [body for label, body in sections if _RESULTS_LABEL.search(label)]
        if not chosen:
            chosen = [body for label, body in sections if not _METHOD_LABEL.search(label)]
        if chosen:
            return " ".join(chosen).strip()
    parts = split_sentences(flat)
    return " ".join(parts[len(parts) // 2 :])


def _p_values(text: str) -> tuple[int, int]:
    small = large = 0
    for sign, number in _P_VALUE.findall(text):
        try:
            value = float(number)
        except ValueError:
            continue
        if (sign in "<≤" and value <= 0.05) or (sign == "=" and value < 0.05):
            small += 1
        elif sign in ">≥=":
            large += 1
    return small, large


FEATURE_NAMES: tuple[str, ...] = (
    *(f"r_{name}" for name in _CUES),
    *(f"a_{name}" for name in _CUES),
    "r_p_small_parsed",
    "r_p_large_parsed",
    "r_last_negative",
    "r_last_hedge",
    "r_sentences",
    *_QUESTION_CUES,
    "coverage_results",
    "coverage_all",
    *READING_FEATURES,
    "bias",
)


def feature_definition_sha256() -> str:
    """The sha256 of what defines the stance features here: their names and every pattern they count, by name.
    The weights' sidecar records it at the fit (``training/verdict_model.py``), and a test compares: a pattern
    edited without a refit is a train/serve skew."""
    patterns = {**_CUES, **_QUESTION_CUES, "p_value": _P_VALUE, "section": _SECTION}
    patterns |= {"results_label": _RESULTS_LABEL, "method_label": _METHOD_LABEL}
    lines = [*FEATURE_NAMES, *(f"{name}={pattern.pattern}/{pattern.flags}" for name, pattern in patterns.items())]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def features(question: str, text: str, reader: StudyReader | None = None) -> np.ndarray:
    """The stance features of one item's text toward a question (see ``FEATURE_NAMES``); ``reader``: the run's
    reader of the question's studies, whose readings are among the features (else the linear one)."""
    results = results_text(text)
    whole = collapse_whitespace(text)
    sentences = split_sentences(results) or [results]
    last = " ".join(sentences[-2:])
    values: list[float] = []
    for body in (results, whole):
        for pattern in _CUES.values():
            values.append(math.log1p(len(pattern.findall(body))))
    small, large = _p_values(results)
    values += [math.log1p(small), math.log1p(large)]
    values.append(float(bool(_CUES["not_significant"].search(last) or _CUES["no_difference"].search(last))))
    values.append(float(bool(_CUES["hedge"].search(last))))
    values.append(math.log1p(len(sentences)))
    values += [float(bool(pattern.search(question))) for pattern in _QUESTION_CUES.values()]
    values += [coverage(question, results), coverage(question, whole)]
    values += [*reading_features(question, text, reader), 1.0]
    return np.asarray(values, dtype=np.float64)


def coverage(question: str, text: str) -> float:
    """The share of the question's key terms that the text names, in any form of the word (``reading.share_named``)."""
    return share_named([stem(term) for term in key_terms(question)], text)


@dataclass(frozen=True)
class StanceModel:
    """Multinomial logistic regression: standardise, then softmax(W x + b) over ``STANCES``."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (len(STANCES), len(FEATURE_NAMES))
    intercept: np.ndarray

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        logits = ((rows - self.mean) / self.scale) @ self.weights.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return np.asarray(exp / exp.sum(axis=1, keepdims=True))

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(FEATURE_NAMES),
            "classes": list(STANCES),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "intercept": self.intercept.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> StanceModel:
        if data.get("features") != list(FEATURE_NAMES) or data.get("classes") != list(STANCES):
            raise ValueError(f"{WEIGHTS_FILE} was trained on other features; rerun training/verdict_model.py")
        return cls(*(np.asarray(data[key], dtype=np.float64) for key in ("mean", "scale", "weights", "intercept")))


@cache
def stance_model() -> StanceModel:
    """The weights shipped beside this module."""
    text = resources.files("deepcritical.appraisal").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    return StanceModel.from_json(json.loads(text))


def _item_weight(item: EvidenceView) -> float:
    if item.retracted or item.design == "registered_trial":
        return 0.0
    level = item.level
    weight = STANCE_UNGRADED_WEIGHT if level is None else STANCE_LEVEL_WEIGHTS.get(level, STANCE_UNGRADED_WEIGHT)
    return weight * (0.5 if item.population in LAB_POPULATIONS else 1.0)


_TO_CLAIM: dict[str, VerdictLabel] = {"yes": "supported", "no": "refuted", "maybe": "mixed"}
_FLIPPED: dict[str, VerdictLabel] = {"yes": "refuted", "no": "supported", "maybe": "mixed"}
# A claim that states an absence ("X does not reduce Y", "X has no effect on Y") is supported by a null
# result: the stance model reads results as answers to "does X reduce Y?", so its yes and no swap.
_NEGATED_CLAIM = re.compile(
    r"\b(?:not|no|never|cannot|neither|nor|fails?|failed|lacks?|lacking|without|unrelated|unaffected)\b|n't\b",
    re.IGNORECASE,
)


def claim_label(claim: str, stance: str) -> VerdictLabel:
    """The label of a claim whose evidence answers ``stance`` to the claim read as a question."""
    return (_FLIPPED if _NEGATED_CLAIM.search(claim) else _TO_CLAIM)[stance]


def insufficient(rationale: str, method: str = METHOD, reader: StudyReader | None = None) -> Verdict:
    method = reader.named_in(method) if reader else method  # the stance features are its readings
    return Verdict(label="insufficient", confidence=0.0, evidence_ids=[], by="code", method=method, rationale=rationale)


def code_verdict(
    question: str,
    items: Sequence[EvidenceView],
    model: StanceModel | None = None,
    reader: StudyReader | None = None,
) -> Verdict:
    """The verdict on ``question`` from ``items`` (the report's pool), computed in code; ``reader``: the run's
    reader of the question's studies (else the linear one)."""
    reader = reader or StudyReader(question)
    yes_no = is_yes_no(question)
    best_of_study: dict[str, tuple[EvidenceView, float]] = {}
    shares: dict[str, float] = {}
    for item in items:
        weight = _item_weight(item)
        share = shares[item.id] = coverage(question, f"{item.title} {item.text}")
        study, weighed = item.document or item.id, weight * share**COVERAGE_POWER
        counts = weight > 0 and share >= MIN_COVERAGE and not item.states_no_result
        # A study weighs once, by its passage (or abstract) that bears most on the question.
        if counts and (study not in best_of_study or weighed > best_of_study[study][1]):
            best_of_study[study] = (item, weighed)
    scored = list(best_of_study.values())
    if not scored:
        return insufficient(
            f"None of the {quantity(len(items), 'item')} reviewed names enough of the question's key terms.",
            reader=reader,
        )
    best_coverage = max(shares[item.id] for item, _ in scored)
    if not yes_no and best_coverage < CLAIM_MIN_COVERAGE:
        return insufficient(
            f"No item of the {len(items)} reviewed names most of what the claim asserts "
            f"(the closest names {best_coverage:.0%} of its key terms).",
            reader=reader,
        )
    model = model or stance_model()
    rows = np.stack([features(question, f"{item.title}. {item.text}", reader) for item, _ in scored])
    probabilities = model.probabilities(rows)
    weights = np.asarray([weight for _, weight in scored])
    pooled = weights @ probabilities / weights.sum()
    best = int(np.argmax(pooled))
    stance = STANCES[best]
    # The items the verdict rests on: those whose own stance is the verdict's (every item when none is), the
    # heaviest first, the strongest design first among equals.
    agreeing = [i for i in range(len(scored)) if int(np.argmax(probabilities[i])) == best] or range(len(scored))
    order = sorted(agreeing, key=lambda i: (-weights[i], scored[i][0].level or 6))
    chosen = [scored[i][0] for i in order[:MAX_VERDICT_ITEMS]]
    strongest = min(chosen, key=lambda item: item.level or 6)
    label: VerdictLabel = stance if yes_no else claim_label(question, stance)  # type: ignore[assignment]
    return Verdict(
        label=label,
        confidence=round(float(pooled[best]), 3),
        evidence_ids=[item.id for item in chosen],
        strongest_design=DESIGN_LABELS.get(strongest.design, strongest.design),  # type: ignore[call-overload]
        strongest_level=strongest.level,
        by="code",
        method=reader.named_in(METHOD),
        probabilities={name: round(float(p), 3) for name, p in zip(STANCES, pooled, strict=True)},
        rationale=f"{quantity(len(scored), 'study', 'studies')} of the {quantity(len(items), 'item')} reviewed "
        "weighed (those naming a third of the question's key terms, a study once); "
        f"pooled stance yes {pooled[0]:.2f}, no {pooled[1]:.2f}, maybe {pooled[2]:.2f}.",
    )
