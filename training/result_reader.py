"""Train the result reader (src/deepcritical/reading/result_reader.json.gz) on Evidence Inference 2.0.

Data: ../shared/data/evidence-inference (DeYoung, Lehman, Nye, Marshall, Wallace, BioNLP 2020; MIT licence):
prompts (a trial, an outcome, an intervention, a comparator), doctors' labels and evidence spans, and the
articles. Trained on the ``train`` articles only; every choice (regularisation, units read) is made on the
``validation`` articles, whose figures this prints. The test articles are held elsewhere.

    .venv/bin/python training/result_reader.py            # train, print validation figures, write weights
    .venv/bin/python training/result_reader.py --dry-run  # the same, without writing the weights
    # A recipe chosen by bench/cv_result_reader.py (grouped cross-validation): nothing chosen on validation
    .venv/bin/python training/result_reader.py --classifier-c 0.3 --ranker-c 0.1 --swapped \
        --cv-summary /tmp/cv_swapped_summary.json
    # Do the shipped weights come out of this script? Writes no weights; on a match, records it in the sidecar
    .venv/bin/python training/result_reader.py --classifier-c 0.3 --ranker-c 0.1 --verify

Beside the weights it writes ``result_reader.provenance.json`` and ``training/cards/result_reader.md``
(``training/provenance.py``): the command, the commit, the sha256 of the data files, the seed, the
regularisation and the figures with their protocol (the grouped-CV summary when given).

Two models over the features of ``deepcritical.reading.result_features``:
- the ranker (binary logistic regression): does a unit of the article overlap the doctors' evidence?
- the classifier (multinomial logistic regression): the doctors' label, from their evidence text.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import random
import sys
import time
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

from deepcritical.evaluation.evidence_inference import Prompt, article_units, read_prompts
from deepcritical.reading.comparison import COMPARATOR, Comparison, subject_arm
from deepcritical.reading.result_features import LABELS, classifier_features, ranker_features
from deepcritical.reading.results import WEIGHTS_FILE, LinearClassifier, LinearModel, ResultReader, best_outcome_share
from provenance import DATA as SHARED_DATA
from provenance import artefact, data_hashes, git_commit, record_verification, this_command, write_provenance

DATA = SHARED_DATA / "evidence-inference"
ARTEFACT = artefact("result_reader")
OUT = ARTEFACT.weights
assert OUT.name == WEIGHTS_FILE
DATA_FILES = ("prompts.csv", "annotations.csv", "splits.csv", "fulltext", "abstracts")  # the articles: folders
TO_LABEL = {
    "significantly increased": "increased",
    "significantly decreased": "decreased",
    "no significant difference": "no_difference",
}
TURNED = {"increased": "decreased", "decreased": "increased"}
NEGATIVES_PER_PROMPT = 60
CLASSIFIER_CS = (0.3, 1.0, 3.0)
# Weights smaller than this are dropped from the file: they change no reading measurably.
PRUNE = 1e-3


def load() -> tuple[dict[str, Prompt], dict[str, list[dict[str, str]]], dict[str, str]]:
    prompts = {prompt.id: prompt for prompt in read_prompts(DATA / "prompts.csv")}
    annotations: dict[str, list[dict[str, str]]] = {}
    with (DATA / "annotations.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["Label"] in TO_LABEL and row["PromptID"] in prompts:
                annotations.setdefault(row["PromptID"], []).append(row)
    with (DATA / "splits.csv").open(encoding="utf-8", newline="") as handle:
        splits = {row["PMCID"]: row["split"] for row in csv.DictReader(handle)}
    return prompts, annotations, splits


def majority(rows: list[dict[str, str]]) -> str:
    return TO_LABEL[Counter(row["Label"] for row in rows).most_common(1)[0][0]]


def spans_of(rows: list[dict[str, str]]) -> list[tuple[int, int]]:
    spans = []
    for row in rows:
        try:
            spans.append((int(row["Evidence Start"]), int(row["Evidence End"])))
        except ValueError:
            continue
    return spans


def fulltext_prompts(ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    """(prompt id, comparison, units, evidence offsets) per prompt with a full text and the doctors' evidence
    offsets, in the order of ``ids`` (one article's units kept at a time)."""
    cache: dict[str, list] = {}  # type: ignore[type-arg]
    for prompt_id in ids:
        prompt = prompts[prompt_id]
        if prompt.pmcid not in cache:
            kind, units = article_units(DATA, prompt.pmcid)
            cache.clear()
            cache[prompt.pmcid] = units if kind == "fulltext" else []
        units = cache[prompt.pmcid]
        spans = spans_of(annotations[prompt_id])
        if units and spans:
            comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
            yield prompt_id, comparison.labelled("\n".join(unit.text for unit in units)), units, spans


def ranker_data(ids: list[str], prompts, annotations, rng: random.Random, sample: bool):  # type: ignore[no-untyped-def]
    features, targets = [], []
    for _, comparison, units, spans in fulltext_prompts(ids, prompts, annotations):
        best = best_outcome_share(units, comparison)
        positive = [any(u.start < e and s < u.end for s, e in spans) for u in units]
        chosen = list(range(len(units)))
        if sample:
            negatives = [i for i, p in enumerate(positive) if not p]
            rng.shuffle(negatives)
            chosen = [i for i, p in enumerate(positive) if p] + negatives[:NEGATIVES_PER_PROMPT]
        for index in chosen:
            features.append(ranker_features(units[index], comparison, best))
            targets.append(int(positive[index]))
    return features, np.array(targets)


def annotation_rows(ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    """(prompt id, comparison, evidence text, label) per doctor's annotation, deduplicated per prompt and text."""
    seen = set()
    for prompt_id in ids:
        prompt = prompts[prompt_id]
        # The arms' labels read from the whole article, as ``ResultReader.read`` reads them.
        comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome).labelled(
            article_text(prompt.pmcid)
        )
        for row in annotations[prompt_id]:
            text = " ".join(row["Annotations"].split())
            if not text or (prompt_id, text) in seen:
                continue
            seen.add((prompt_id, text))
            yield prompt_id, *oriented(comparison, text, TO_LABEL[row["Label"]])


def oriented(comparison: Comparison, text: str, label: str) -> tuple[Comparison, str, str]:
    """(comparison, text, label) as ``ResultReader.readings`` reads the text: one whose subject is the
    comparator, turned, its increase and decrease exchanged."""
    if subject_arm(text, comparison) == COMPARATOR:
        return comparison.turned(), text, TURNED.get(label, label)
    return comparison, text, label


def unit_rows(ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    """(prompt id, comparison, unit text, label) for each unit of a full text that holds a doctor's evidence
    and is not that evidence as written: what the classifier reads in a whole article is the article's
    sentence, the doctors' span is often a part of one. Oriented as ``annotation_rows``."""
    seen = set()
    for prompt_id, comparison, units, _ in fulltext_prompts(ids, prompts, annotations):
        for row in annotations[prompt_id]:
            try:
                start, end = int(row["Evidence Start"]), int(row["Evidence End"])
            except ValueError:
                continue
            evidence = " ".join(row["Annotations"].split())
            for unit in units:
                text = " ".join(unit.text.split())
                if not (unit.start < end and start < unit.end) or text == evidence or (prompt_id, text) in seen:
                    continue
                seen.add((prompt_id, text))
                yield prompt_id, *oriented(comparison, text, TO_LABEL[row["Label"]])


@lru_cache(maxsize=8)
def article_text(pmcid: str) -> str:
    """The article's units as ``ResultReader.read`` is given them (its full text, else its abstract)."""
    return "\n".join(unit.text for unit in article_units(DATA, pmcid)[1])


def classifier_data(ids: list[str], prompts, annotations, *, swapped: bool = False):  # type: ignore[no-untyped-def]
    """Features and labels of each doctor's evidence text; ``swapped``: each again with the arms exchanged and
    increase and decrease with them (both arms' orders)."""
    rows = list(annotation_rows(ids, prompts, annotations))
    if swapped:
        rows += [(p, comparison.turned(), text, TURNED.get(label, label)) for p, comparison, text, label in rows]
    return [classifier_features(text, comparison) for _, comparison, text, _ in rows], [row[3] for row in rows]


def provenance(args: argparse.Namespace, figures: list[dict[str, object]]) -> dict[str, object]:
    return {
        "title": "The linear result reader (ranker and classifier)",
        "script": "training/result_reader.py",
        "command": this_command(),
        "commit": git_commit(),
        "data": "Evidence Inference 2.0 (MIT licence), train articles only",
        "data_sha256": data_hashes(DATA / name for name in DATA_FILES),
        "seed": args.seed,
        "figures": figures,
    }


def export(vectorizer: DictVectorizer, model: LogisticRegression) -> dict[str, object]:
    names = vectorizer.get_feature_names_out()
    coef = model.coef_  # (classes, features), or (1, features) for a binary model
    weights = {}
    for column, name in enumerate(names):
        vector = [round(float(value), 4) for value in coef[:, column]]
        if max(abs(value) for value in vector) >= PRUNE:
            weights[str(name)] = vector
    return {"weights": weights, "intercept": [round(float(v), 4) for v in model.intercept_]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="print the figures, write no weights")
    parser.add_argument(
        "--verify", action="store_true", help="write no weights: do these arguments rebuild the shipped ones?"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--classifier-c", type=float, help="fixed (chosen by grouped CV): no choice on validation")
    parser.add_argument("--ranker-c", type=float, help="fixed (chosen by grouped CV): no choice on validation")
    parser.add_argument("--swapped", action="store_true", help="train the classifier on both arms' orders too")
    parser.add_argument("--cv-summary", type=Path, help="bench/cv_result_reader.py's summary, kept in the provenance")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed to train the reader")
    started = time.perf_counter()
    prompts, annotations, splits = load()
    train = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "train")
    validation = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "validation")
    print(f"prompts: train {len(train)}, validation {len(validation)}")
    rng = random.Random(args.seed)

    x_train, y_train = classifier_data(train, prompts, annotations, swapped=args.swapped)
    x_val, y_val = classifier_data(validation, prompts, annotations)
    classifier_vectorizer = DictVectorizer()
    matrix = classifier_vectorizer.fit_transform(x_train)
    best_classifier, best_f1 = None, -1.0
    for c in (args.classifier_c,) if args.classifier_c else CLASSIFIER_CS:
        model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
        model.fit(matrix, y_train)
        f1 = f1_score(y_val, model.predict(classifier_vectorizer.transform(x_val)), average="macro")
        print(f"classifier C={c}: validation macro-F1 on the doctors' evidence {f1:.4f}")
        if f1 > best_f1 or args.classifier_c:
            best_classifier, best_f1 = model, f1
    assert best_classifier is not None
    print(f"classifier features: {len(classifier_vectorizer.vocabulary_)}; labels {list(best_classifier.classes_)}")

    r_train, t_train = ranker_data(train, prompts, annotations, rng, sample=True)
    ranker_vectorizer = DictVectorizer()
    ranker_matrix = ranker_vectorizer.fit_transform(r_train)
    best_ranker, best_found = None, -1.0
    for c in (args.ranker_c,) if args.ranker_c else (0.1, 1.0):
        ranker = LogisticRegression(C=c, max_iter=3000)
        ranker.fit(ranker_matrix, t_train)
        candidate = ResultReader(
            LinearModel.from_json(export(ranker_vectorizer, ranker)),
            LinearClassifier(
                LinearModel.from_json(export(classifier_vectorizer, best_classifier)),
                tuple(str(label) for label in best_classifier.classes_),
            ),
        )
        found, f1 = evaluate(candidate, validation, prompts, annotations)
        print(f"ranker C={c}: validation evidence found (first unit) {found:.4f}, pipeline macro-F1 {f1:.4f}")
        if found > best_found or args.ranker_c:
            best_ranker, best_found = ranker, found
    assert best_ranker is not None

    data = {
        "labels": [str(label) for label in best_classifier.classes_],
        "ranker": export(ranker_vectorizer, best_ranker),
        "classifier": export(classifier_vectorizer, best_classifier),
        "trained_on": "Evidence Inference 2.0 train articles (MIT licence); chosen on its validation articles",
    }
    assert set(data["labels"]) == set(LABELS)  # type: ignore[arg-type]
    payload = gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0)
    print(f"weights: {len(payload) / 1e6:.2f} MB compressed; trained in {time.perf_counter() - started:.0f} s")
    if args.verify:
        verify(payload)
    elif not args.dry_run:
        OUT.write_bytes(payload)
        write_record(args, (best_classifier.C, best_f1), (best_ranker.C, best_found))
        print(f"wrote {OUT}, {ARTEFACT.sidecar} and {ARTEFACT.card}")


def write_record(args: argparse.Namespace, classifier: tuple[float, float], ranker: tuple[float, float]) -> None:
    """The sidecar and card of weights just written: the figures on validation (each model's C and its figure),
    and the grouped-CV summary's when given."""
    (classifier_c, classifier_f1), (ranker_c, found) = classifier, ranker
    figures: list[dict[str, object]] = [
        {
            "measure": "classifier macro-F1 on the doctors' evidence texts",
            "value": round(classifier_f1, 4),
            "protocol": "validation articles"
            + (", C given" if args.classifier_c else f", which chose C among {CLASSIFIER_CS}"),
        },
        {
            "measure": "evidence found by the first unit read",
            "value": round(found, 4),
            "protocol": "validation articles, full texts" + (", C given" if args.ranker_c else ", which chose C"),
        },
    ]
    if args.cv_summary:
        summary = json.loads(args.cv_summary.read_text(encoding="utf-8"))
        protocol = summary.get("protocol") or (
            f"5 folds grouped by PMCID over the train and validation articles (bench/cv_result_reader.py "
            f"--variant {summary['variant']})"
        )
        figures += [
            {"measure": "macro-F1, whole articles", "value": summary["macro_f1"], "protocol": protocol},
            {"measure": "accuracy, whole articles", "value": summary["accuracy"], "protocol": protocol},
        ]
    record = provenance(args, figures)
    record["parameters"] = {"classifier_c": classifier_c, "ranker_c": ranker_c, "swapped": args.swapped}
    write_provenance(ARTEFACT, record)


def verify(payload: bytes) -> None:
    """Exit 1 when ``payload`` is not the shipped weights; else record in the sidecar that this command rebuilds
    them (with the data's sha256 as read now) and exit 0."""
    shipped = hashlib.sha256(OUT.read_bytes()).hexdigest()
    rebuilt = hashlib.sha256(payload).hexdigest()
    if rebuilt != shipped:
        sys.exit(f"not reproduced: the weights rebuilt have sha256 {rebuilt}, the shipped {shipped}")
    how = f"yes: `{this_command()}` at commit {git_commit()} rebuilds the same bytes"
    record_verification(ARTEFACT, how, data_hashes(DATA / name for name in DATA_FILES))
    print(f"reproduced: {OUT.name} (sha256 {shipped}); recorded in {ARTEFACT.sidecar.name} and {ARTEFACT.card.name}")


def readings(reader: ResultReader, ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    """(gold, predicted, evidence first) per prompt: the doctors' label, the reader's, and whether the first unit
    it ranks overlaps the doctors' evidence (None without units or evidence offsets)."""
    read = []
    cache: dict[str, list] = {}  # type: ignore[type-arg]
    for prompt_id in ids:
        prompt = prompts[prompt_id]
        if prompt.pmcid not in cache:
            cache.clear()
            cache[prompt.pmcid] = article_units(DATA, prompt.pmcid)[1]
        units = cache[prompt.pmcid]
        comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
        ranked = reader.rank(units, comparison)
        reading = reader.read(units, comparison)
        probabilities = reading.probabilities or (reader.classify(ranked[0][1].text, comparison) if ranked else {})
        predicted = max(probabilities, key=probabilities.__getitem__) if probabilities else "no_difference"
        spans = spans_of(annotations[prompt_id])
        first = None
        if ranked and spans:
            unit = ranked[0][1]
            first = any(unit.start < e and s < unit.end for s, e in spans)
        read.append((majority(annotations[prompt_id]), predicted, first))
    return read


def evaluate(reader: ResultReader, ids: list[str], prompts, annotations) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Evidence found by the first unit read (full-text prompts) and the pipeline's macro-F1."""
    read = readings(reader, ids, prompts, annotations)
    firsts = [first for _, _, first in read if first is not None]
    found = sum(firsts) / max(1, len(firsts))
    return found, float(f1_score([gold for gold, _, _ in read], [label for _, label, _ in read], average="macro"))


if __name__ == "__main__":
    main()
