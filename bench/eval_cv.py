"""The honest estimate of ``deepcritical eval pubmedqa --no-llm`` on items whose labels the verdict never saw.

The shipped stance weights (``appraisal/verdict_model.json``) were fitted on PubMedQA's 500 dev items, so
``eval`` on those items is in-sample. Here every item is predicted by the full loop (search over the pool,
grading, pooling, the report's reconciliation) with stance weights fitted by ``training/verdict_model.py``'s
``fit`` on the *other* folds only: stratified K-fold over the items, one run of the real loop per fold.

    PYTHONPATH=src python bench/eval_cv.py [--data FILE] [--folds 5] [--store DIR] [--out DIR] [--capture FILE]
                                           [--reader linear|transformer]

``--store`` reuses an evaluation's embedded pool (``eval/pubmedqa/store``); without it the pool is embedded
once into ``OUT/store``. ``--capture`` also writes the appraisal's inputs for every item (question, evidence,
pool; a pickle), which ``bench/replay_verdict.py`` replays in under a minute per setting to measure a change to the
verdict or to the stance model's settings. ``--reader`` is the result reader the loop reads with (``--reader``
of ``research``); each fold's stance weights are fitted, as the shipped ones were, on the linear reader's features,
as a run with ``--reader transformer`` uses them. Prints accuracy, macro-F1, per-class F1 and the confusion matrix,
beside the same figures for the stance model alone on each item's own abstract (what the loop adds or loses)."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import pickle
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from unittest import mock

import numpy as np
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score
from sklearn.model_selection import StratifiedKFold

from deepcritical.appraisal import stance
from deepcritical.appraisal.run_appraisal import Appraisal, appraise_run
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.cli.common import settings_from
from deepcritical.evaluation import pubmedqa_scifact as evaluation
from deepcritical.logs import configure_logging
from deepcritical.models import Evidence
from deepcritical.outputs import Assessment
from deepcritical.run import report

HERE = Path(__file__).resolve().parent


def trainer_module() -> ModuleType:
    training = str(HERE.parent / "training")
    if training not in sys.path:  # the entry imports its neighbour ``provenance``
        sys.path.insert(0, training)
    spec = importlib.util.spec_from_file_location("verdict_model", HERE.parent / "training" / "verdict_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(name: str, gold: np.ndarray, predicted: np.ndarray) -> str:
    f1 = f1_score(gold, predicted, average=None, labels=[0, 1, 2])
    return (
        f"{name}: accuracy {accuracy_score(gold, predicted):.3f}, macro-F1 {f1.mean():.3f}, "
        f"F1 yes/no/maybe {' / '.join(f'{v:.3f}' for v in f1)}, "
        f"predicted {np.bincount(predicted, minlength=3).tolist()}, "
        f"confusion {confusion_matrix(gold, predicted, labels=[0, 1, 2]).tolist()}"
    )


def main() -> None:
    trainer = trainer_module()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=trainer.DEFAULT_DATA)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", type=Path, help="an evaluation's embedded pool to reuse")
    parser.add_argument("--out", type=Path, default=Path("eval") / "pubmedqa-cv")
    parser.add_argument("--capture", type=Path, help="write the appraisal's inputs per question here")
    parser.add_argument("--reader", choices=("linear", "transformer"), default="linear", help="the loop's reader")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: no such file (PubMedQA's pqal_dev.json from ../shared/data/pubmedqa)")
    configure_logging(verbose=False)

    data = json.loads(args.data.read_text(encoding="utf-8"))
    keys = list(data)
    rows, gold = trainer.load(args.data)
    questions, pool = evaluation.read_pubmedqa_inputs(args.data)
    by_id = {question.id: question for question in questions}
    out_root, store = args.out.resolve(), args.store.resolve() if args.store is not None else None
    if store is not None and (store.is_relative_to(out_root) or out_root.is_relative_to(store)):
        sys.exit(f"--out {args.out} and --store {args.store} overlap: --out is cleared before each run")
    if args.out.exists():
        shutil.rmtree(args.out)
    settings = settings_from(no_llm=True, max_iterations=1, max_results_per_source=10, reader=args.reader)
    looped: dict[str, str] = {}
    captured: dict[str, tuple[object, ...]] = {}

    def recording(
        question: str,
        evidence: Mapping[str, Evidence],
        pool: Sequence[str],
        reader: StudyReader,
        assessment: Assessment | None = None,
    ) -> Appraisal:
        # Plain copies of the run's read-only views, so that the inputs can be pickled.
        captured[" ".join(question.split())] = (question, dict(evidence), list(pool))
        return appraise_run(question, evidence, pool, reader, assessment)

    alone = np.zeros_like(gold)
    splits = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed).split(rows, gold)
    for fold, (train, test) in enumerate(splits):
        model = trainer.fit(rows[train], gold[train], None)
        alone[test] = model.probabilities(rows[test]).argmax(axis=1)
        out = args.out / f"fold{fold}"
        out.mkdir(parents=True)
        # The pool is embedded once: into fold 0's store unless one is given, which every later fold reuses.
        shared_store = args.store.resolve() if args.store is not None else (args.out / "fold0" / "store").resolve()
        if args.store is not None or fold > 0:
            (out / "store").symlink_to(shared_store, target_is_directory=True)
        with (
            mock.patch.object(stance, "stance_model", lambda model=model: model),
            mock.patch.object(report, "appraise_run", recording if args.capture else appraise_run),
        ):
            asyncio.run(evaluation.predict("pubmedqa", [by_id[keys[i]] for i in test], pool, settings, out))
        for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            looped[str(record["id"])] = str(record["prediction"])
        print(f"fold {fold + 1}/{args.folds}: {len(test)} items", file=sys.stderr, flush=True)
    predicted = np.asarray([stance.STANCES.index(looped[key]) for key in keys])
    print(f"PubMedQA {args.data.name}: {len(keys)} items, {args.folds}-fold, seed {args.seed}, reader {args.reader}")
    print(f"majority baseline accuracy {np.bincount(gold).max() / len(gold):.3f}")
    print(figures("stance model alone, own abstract", gold, alone))
    print(figures("full loop (eval --no-llm)", gold, predicted), flush=True)
    if args.capture:
        # The appraisal's inputs (question, evidence, pool) by the question's text, whitespace folded.
        args.capture.write_bytes(pickle.dumps(captured))
        print(f"captured the verdict's inputs for {len(captured)} questions: {args.capture}", file=sys.stderr)


if __name__ == "__main__":
    main()
