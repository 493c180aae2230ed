r"""The linear result reader's variants chosen by cross-validation grouped by article (issue 39): Evidence
Inference 2.0's train and validation articles together, cut into 5 folds by PMCID (one article's prompts in one
fold), each variant trained on four folds and read on the fifth, the whole reader (ranker, classifier, conventions)
on whole articles as ``deepcritical eval evidence-inference`` reads them. The figure is macro-F1 over every prompt,
each read by the model that did not see its article; the validation split is not used to choose anything here.

    python bench/cv_result_reader.py --which-c          # which regularisation today's weights were fitted with
    python bench/cv_result_reader.py --variant today --fold 0   # one fold (1-3 minutes; its readings cached)
    python bench/cv_result_reader.py --variant today            # the figures over the 5 folds (runs those not cached)

Each fold's readings are kept in /tmp/deepcritical-cv-result-reader (keyed on variant, C and fold), so no run is
longer than the 10 minutes a shared machine allows.

Variants of the classifier's training signal (the ranker is today's recipe in every variant, refitted per fold):
- ``today``: each doctor's evidence text per prompt, oriented as the reader orients it (training/result_reader.py);
- ``swapped``: and each again with the arms exchanged and increase and decrease with them (both arms' orders);
- ``units``: and the article's sentences that hold a doctor's evidence, as the reader meets them in whole articles;
- ``both``: swapped and units.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import random
import sys
import time
from pathlib import Path

from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training entries' data loading
from deepcritical.reading.result_features import classifier_features
from deepcritical.reading.results import LinearClassifier, LinearModel, ResultReader
from result_reader import (
    DATA,
    OUT,
    TURNED,
    annotation_rows,
    export,
    load,
    ranker_data,
    readings,
    unit_rows,
)

FOLDS = 5
SEED = 39
CACHE = Path("/tmp/deepcritical-cv-result-reader")
VARIANTS = ("today", "swapped", "units", "both")


def folds(prompts, annotations, splits) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Prompt ids per fold: articles of train and validation shuffled with ``SEED`` and dealt round."""
    usable = sorted(p for p in annotations if splits.get(prompts[p].pmcid) in ("train", "validation"))
    articles = sorted({prompts[p].pmcid for p in usable})
    random.Random(SEED).shuffle(articles)
    fold_of = {pmcid: index % FOLDS for index, pmcid in enumerate(articles)}
    return [[p for p in usable if fold_of[prompts[p].pmcid] == k] for k in range(FOLDS)]


def classifier_rows(variant: str, ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    rows = list(annotation_rows(ids, prompts, annotations))
    if variant in ("units", "both"):
        rows += list(unit_rows(ids, prompts, annotations))
    if variant in ("swapped", "both"):
        rows += [(p, comparison.turned(), text, TURNED.get(label, label)) for p, comparison, text, label in rows]
    return [classifier_features(text, comparison) for _, comparison, text, _ in rows], [row[3] for row in rows]


def fit_classifier(variant: str, c: float, ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    features, labels = classifier_rows(variant, ids, prompts, annotations)
    vectorizer = DictVectorizer()
    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
    model.fit(vectorizer.fit_transform(features), labels)
    return vectorizer, model, len(labels)


def fit_ranker(c: float, ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    features, targets = ranker_data(ids, prompts, annotations, random.Random(0), sample=True)
    vectorizer = DictVectorizer()
    model = LogisticRegression(C=c, max_iter=3000)
    model.fit(vectorizer.fit_transform(features), targets)
    return vectorizer, model


def cached_ranker(fold: int, c: float, ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"ranker-{SEED}-{fold}-{c}.pickle"
    if path.exists():
        return pickle.loads(path.read_bytes())
    fitted = fit_ranker(c, ids, prompts, annotations)
    path.write_bytes(pickle.dumps(fitted))
    return fitted


def largest_gap(fitted: dict[str, list[float]], shipped: dict[str, list[float]]) -> float:
    common = set(fitted) & set(shipped)
    return max(abs(a - b) for name in common for a, b in zip(fitted[name], shipped[name], strict=True))


def which_c(prompts, annotations, splits) -> None:  # type: ignore[no-untyped-def]
    """Fit today's recipe on the train split at each regularisation the training script tries and compare the
    weights with the shipped file's: the C whose weights match is today's."""
    shipped = json.loads(gzip.decompress(OUT.read_bytes()))
    train = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "train")
    for c in (0.3, 1.0, 3.0):
        vectorizer, model, _ = fit_classifier("today", c, train, prompts, annotations)
        gap = largest_gap(export(vectorizer, model)["weights"], shipped["classifier"]["weights"])  # type: ignore[arg-type]
        print(f"classifier C={c}: largest weight difference from the shipped file {gap:.4f}", flush=True)
    for c in (0.1, 1.0):
        vectorizer, model = fit_ranker(c, train, prompts, annotations)
        gap = largest_gap(export(vectorizer, model)["weights"], shipped["ranker"]["weights"])  # type: ignore[arg-type]
        print(f"ranker C={c}: largest weight difference from the shipped file {gap:.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--which-c", action="store_true")
    parser.add_argument("--variant", choices=VARIANTS, default="today")
    parser.add_argument("--classifier-c", type=float, default=0.3, help="today's: 0.3 (--which-c)")
    parser.add_argument("--ranker-c", type=float, default=0.1, help="today's: 0.1 (--which-c)")
    parser.add_argument("--fold", type=int, choices=range(FOLDS), help="only this fold")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed")
    prompts, annotations, splits = load()
    if args.which_c:
        which_c(prompts, annotations, splits)
        return
    started = time.perf_counter()
    parts = folds(prompts, annotations, splits)
    results = []
    for k, held in enumerate(parts):
        if args.fold is not None and k != args.fold:
            continue
        done = CACHE / f"readings-{args.variant}-{args.classifier_c}-{args.ranker_c}-{SEED}-{k}.json"
        if done.exists():
            results += [tuple(row) for row in json.loads(done.read_text())]
            continue
        rest = [p for j, part in enumerate(parts) if j != k for p in part]
        r_vectorizer, ranker = cached_ranker(k, args.ranker_c, rest, prompts, annotations)
        c_vectorizer, classifier, n = fit_classifier(args.variant, args.classifier_c, rest, prompts, annotations)
        reader = ResultReader(
            LinearModel.from_json(export(r_vectorizer, ranker)),
            LinearClassifier(
                LinearModel.from_json(export(c_vectorizer, classifier)), tuple(str(x) for x in classifier.classes_)
            ),
        )
        fold = readings(reader, held, prompts, annotations)
        CACHE.mkdir(exist_ok=True)
        done.write_text(json.dumps(fold))
        results += fold
        f1 = f1_score([g for g, _, _ in fold], [p for _, p, _ in fold], average="macro")
        print(f"fold {k}: {len(held)} prompts, {n} classifier rows, macro-F1 {f1:.4f}", flush=True)
    gold, predicted = [g for g, _, _ in results], [p for _, p, _ in results]
    firsts = [f for _, _, f in results if f is not None]
    summary = {
        "variant": args.variant,
        "classifier_c": args.classifier_c,
        "ranker_c": args.ranker_c,
        "prompts": len(results),
        "macro_f1": round(float(f1_score(gold, predicted, average="macro")), 4),
        "accuracy": round(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold), 4),
        "evidence_first": round(sum(firsts) / max(1, len(firsts)), 4),
        "seconds": round(time.perf_counter() - started),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
