"""Replay the verdict of ``bench/eval_cv.py`` on captured inputs: the same cross-validated figures for a change
to the verdict or to the stance model's settings, in a few minutes instead of a loop per setting, and a nested
choice among those settings.

    PYTHONPATH=src python bench/eval_cv.py --capture verdict-inputs.pkl   # once (about 5 minutes)
    PYTHONPATH=src python bench/replay_verdict.py verdict-inputs.pkl [--class-weight none balanced] \
        [--no-bias 1.0 1.5] [--maybe-bias 1.0 1.5 2.5] [--unread 0.7] [--frameless 0 0.34 0.5]

Every item's verdict is recomputed as the run computes it in code (``appraisal.run_appraisal.appraise_run``: the
counted set read from the captured evidence and pool, then ``verdict.counted_verdict``), with stance weights fitted
by ``training/verdict_model.py``'s ``fit`` on other items only. Folds are by item (PubMedQA's items are one
question each, so a fold holds whole items; stratified by label, seed ``--seed``).

For each combination of the stance model's class weight, its decision bias toward "no" and toward "maybe" (the
probabilities are multiplied by it), ``UNREAD_CLEAR_SHARE`` and ``FRAMELESS_COVERAGE`` (0: no frameless fallback),
it prints the 5-fold figures (every item predicted
by a model fitted on the other folds). With more than one combination it prints the nested estimate, the honest one:
for each outer fold, the combination best on an inner 4-fold cross-validation of the other folds' items alone
(accuracy + macro-F1, each inner item predicted by a model fitted on the other inner folds) is fitted on those items
and predicts the outer fold, whose labels chose nothing. Each line gives the predicted yes/no/maybe counts beside
the gold counts. The capture is a pickle: load only one you wrote yourself."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pickle
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deepcritical.appraisal import stance, verdict
from deepcritical.appraisal.framing import STUDY_TEXT_CHARS, EvidenceView
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.evaluation.pubmedqa_scifact import to_label
from eval_cv import figures, trainer_module

# class weight, bias toward no, bias toward maybe, UNREAD_CLEAR_SHARE, FRAMELESS_COVERAGE (0: no fallback)
Setting = tuple[str, float, float, float, float]


class Replay:
    """Each question's counted set read once; the stance features of each (question, text) computed once."""

    def __init__(self, captured: dict[str, tuple[Any, ...]], questions: Sequence[str]) -> None:
        self.inputs: list[tuple[str, Strength, list[EvidenceView]]] = []
        for key in questions:
            question, evidence, pool = captured[key]
            reader = StudyReader(question)
            counted = counted_items(question, evidence, pool, reader)
            items = [evidence[i] for i in pool if i in evidence] or list(evidence.values())
            self.inputs.append((question, counted, [EvidenceView.of(item, STUDY_TEXT_CHARS) for item in items]))
        self.rows: dict[tuple[str, str], np.ndarray] = {}
        self.features = stance.features

    def cached_features(self, question: str, text: str, reader: StudyReader | None = None) -> np.ndarray:
        key = (question, text)
        if key not in self.rows:
            self.rows[key] = self.features(question, text, reader)
        return self.rows[key]

    def predict(
        self, model: stance.StanceModel, indices: Sequence[int], unread: float, frameless: float
    ) -> dict[int, int]:
        predicted = {}
        with (
            mock.patch.object(stance, "stance_model", return_value=model),
            mock.patch.object(stance, "features", self.cached_features),
            mock.patch.object(verdict, "UNREAD_CLEAR_SHARE", unread),
            mock.patch.object(verdict, "FRAMELESS_COVERAGE", frameless or math.inf),
        ):
            for i in indices:
                question, counted, views = self.inputs[i]
                outcome = verdict.counted_verdict(question, counted, views)
                predicted[i] = stance.STANCES.index(to_label("pubmedqa", outcome))
        return predicted


def score(gold: np.ndarray, predicted: np.ndarray) -> float:
    return float(accuracy_score(gold, predicted) + f1_score(gold, predicted, average="macro"))


def main() -> None:
    trainer = trainer_module()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("capture", type=Path, help="the verdict inputs written by eval_cv.py --capture")
    parser.add_argument("--data", type=Path, default=trainer.DEFAULT_DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--class-weight", nargs="+", choices=("none", "balanced"), default=[trainer.CLASS_WEIGHT])
    parser.add_argument("--no-bias", type=float, nargs="+", default=[trainer.BIAS[1]])
    parser.add_argument("--maybe-bias", type=float, nargs="+", default=[trainer.BIAS[2]])
    parser.add_argument("--unread", type=float, nargs="+", default=[verdict.UNREAD_CLEAR_SHARE])
    parser.add_argument("--frameless", type=float, nargs="+", default=[verdict.FRAMELESS_COVERAGE], help="0: none")
    args = parser.parse_args()
    for path in (args.capture, args.data):
        if not path.is_file():
            sys.exit(f"{path}: no such file")
    captured = pickle.loads(args.capture.read_bytes())
    data = json.loads(args.data.read_text(encoding="utf-8"))
    questions = [" ".join(str(item["QUESTION"]).split()) for item in data.values()]
    if missing := [q for q in questions if q not in captured]:
        sys.exit(f"{args.capture}: no captured inputs for {len(missing)} question(s), e.g. {missing[0]!r}")
    rows, gold = trainer.load(args.data)
    replay = Replay(captured, questions)
    settings: list[Setting] = list(
        itertools.product(args.class_weight, args.no_bias, args.maybe_bias, args.unread, args.frameless)
    )

    def fitted(setting: Setting, train: np.ndarray) -> stance.StanceModel:
        weight, no_bias, maybe_bias, _, _ = setting
        return trainer.fit(rows[train], gold[train], trainer.class_weight_of(weight), (1.0, no_bias, maybe_bias))

    def cross_validated(setting: Setting, items: np.ndarray, folds: int, seed: int) -> np.ndarray:
        """Each of ``items`` predicted by a model fitted on the other folds of ``items``."""
        predicted: dict[int, int] = {}
        for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(items, gold[items]):
            predicted |= replay.predict(fitted(setting, items[train]), items[test].tolist(), *setting[3:])
        return np.asarray([predicted[i] for i in items.tolist()])

    every = np.arange(len(gold))
    print(f"PubMedQA {args.data.name}: {len(gold)} items, folds by item ({args.folds}, stratified, seed {args.seed})")
    print(f"gold yes/no/maybe {np.bincount(gold, minlength=3).tolist()}")
    plain: dict[Setting, np.ndarray] = {}
    for setting in settings:
        plain[setting] = cross_validated(setting, every, args.folds, args.seed)
        print(figures(f"{setting_name(setting)}, {args.folds}-fold", gold, plain[setting]), flush=True)
    if len(settings) > 1:
        nested, chosen = np.zeros_like(gold), []
        outer = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed)
        for train, test in outer.split(every, gold):

            def inner(setting: Setting, train: np.ndarray = train) -> float:
                return score(gold[train], cross_validated(setting, train, args.folds - 1, args.seed + 1))

            best = max(settings, key=inner)
            chosen.append(best)
            outcome = replay.predict(fitted(best, train), test.tolist(), *best[3:])
            nested[test] = [outcome[i] for i in test.tolist()]
            print(f"outer fold {len(chosen)}: chose {setting_name(best)}", file=sys.stderr, flush=True)
        print(figures("nested choice", gold, nested))
        print("chosen per outer fold:", dict(Counter(setting_name(s) for s in chosen)))
        on_all = max(settings, key=lambda setting: score(gold, plain[setting]))
        print(f"best on the {args.folds}-fold figures of every item (what a refit ships): {setting_name(on_all)}")


def setting_name(setting: Setting) -> str:
    weight, no_bias, maybe_bias, unread, frameless = setting
    return f"class_weight {weight}, bias no {no_bias} maybe {maybe_bias}, unread {unread}, frameless {frameless}"


if __name__ == "__main__":
    main()
