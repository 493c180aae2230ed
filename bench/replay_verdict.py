"""Replay the verdict stage of ``bench/eval_cv.py`` on captured inputs: the same cross-validated figures for a
change to the verdict alone, in seconds instead of minutes, and a nested choice among verdict settings.

    PYTHONPATH=src python bench/eval_cv.py --store DIR --capture verdict-inputs.pkl   # once (minutes)
    PYTHONPATH=src python bench/replay_verdict.py verdict-inputs.pkl [--unread 0.6 0.7] [--no-bias 1.1 1.2]

Every item's verdict is recomputed by ``appraisal.verdict.run_verdict`` from the inputs the loop gave it (the
question, the report, the evidence, the pool; the counted set rebuilt from them by ``render.counted_items``, so a
change to how studies are read since the capture is measured too), with stance weights fitted by
``training/verdict_model.py``'s ``fit`` on the other folds (the same stratified folds as ``eval_cv``), for every
combination of ``UNREAD_CLEAR_SHARE`` (``--unread``) and the stance model's bias toward "no" (``--no-bias``).
With more than one combination it also prints the nested estimate of choosing among them: for each outer
fold, the combination best on the other folds' items (accuracy + macro-F1) predicts the held-out fold.
The capture is a pickle: load only one you wrote yourself."""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import sys
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deepcritical.appraisal import stance, verdict
from deepcritical.evaluation.pubmedqa_scifact import to_label
from deepcritical.report.render import counted_items
from eval_cv import figures, trainer_module


def main() -> None:
    trainer = trainer_module()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("capture", type=Path, help="the verdict inputs written by eval_cv.py --capture")
    parser.add_argument("--data", type=Path, default=trainer.DEFAULT_DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--unread", type=float, nargs="+", default=[verdict.UNREAD_CLEAR_SHARE])
    parser.add_argument("--no-bias", type=float, nargs="+", default=[trainer.BIAS[1]])
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
    folds = list(StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed).split(rows, gold))
    predictions: dict[tuple[float, float], np.ndarray] = {}
    for unread, no_bias in itertools.product(args.unread, args.no_bias):
        predicted = np.zeros_like(gold)
        with (
            mock.patch.object(verdict, "UNREAD_CLEAR_SHARE", unread),
            mock.patch.object(trainer, "BIAS", (trainer.BIAS[0], no_bias, trainer.BIAS[2])),
        ):
            for train, test in folds:
                model = trainer.fit(rows[train], gold[train], None)
                with mock.patch.object(stance, "stance_model", lambda model=model: model):
                    for i in test:
                        question, report, evidence, pool, _ = captured[questions[i]]
                        # The counted set is rebuilt, not taken from the capture: its readings (each study's
                        # direction) are the study reader's, which a change since the capture may have moved.
                        counted = counted_items(question, evidence, pool)
                        outcome = verdict.run_verdict(question, report, evidence, pool, counted)
                        predicted[i] = stance.STANCES.index(to_label("pubmedqa", outcome))
        predictions[unread, no_bias] = predicted
        print(figures(f"unread {unread}, no-bias {no_bias}", gold, predicted), flush=True)
    if len(predictions) > 1:
        nested, chosen = np.zeros_like(gold), []
        for train, test in folds:

            def score(key: tuple[float, float], train: np.ndarray = train) -> float:
                p = predictions[key][train]
                return float(accuracy_score(gold[train], p) + f1_score(gold[train], p, average="macro"))

            best = max(predictions, key=score)
            chosen.append(best)
            nested[test] = predictions[best][test]
        print(figures(f"nested choice (per fold: {chosen})", gold, nested))


if __name__ == "__main__":
    main()
