"""Train (and cross-validate) the code verdict's stance model: a multinomial logistic regression over the
cue features of ``deepcritical.appraisal.stance.features``.

Data: PubMedQA PQA-L (Jin et al., 2019; MIT licence), the 500 labelled items outside its test split
(``../shared/data/pubmedqa/pqal_dev.json``). Each item gives one (question, abstract without its
conclusion) pair and its label yes/no/maybe. SciFact is never used: its licence (CC BY-NC 2.0) allows
evaluation only, so it stays a held-out check.

    PYTHONPATH=src python training/verdict_model.py [--data FILE] [--write | --verify]

Prints the stance model's 5-fold cross-validated accuracy, macro-F1, predicted answer counts and confusion
matrix (rows gold, columns predicted: yes, no, maybe; folds by item, stratified) beside the majority baseline;
``--write`` then fits on every item and writes ``src/deepcritical/appraisal/verdict_model.json`` (a few KB) with its
sidecar ``verdict_model.provenance.json`` (which also records the features of ``PROBES``, so that the suite sees
when the features move without a refit) and card ``training/cards/verdict_model.md`` (``training/provenance.py``).
``--verify`` fits the same and writes no weights: it exits 1 unless they are the shipped ones, and on a match
records so in the sidecar. The settings are constants here, chosen in the whole loop by
``bench/replay_verdict.py``'s nested cross-validation."""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score
from sklearn.model_selection import StratifiedKFold

from deepcritical.appraisal.stance import STANCES, WEIGHTS_FILE, StanceModel, feature_definition_sha256, features
from provenance import DATA, artefact, data_hashes, git_commit, record_verification, this_command, write_provenance

DEFAULT_DATA = DATA / "pubmedqa" / "pqal_dev.json"
ARTEFACT = artefact("verdict_model")
OUT = ARTEFACT.weights
assert OUT.name == WEIGHTS_FILE
SEED = 0  # the cross-validation's folds; the fit itself draws nothing
# Two fits of the same data agree to about 1e-16 (the order of floating-point sums varies): that is the same model.
TOLERANCE = 1e-9
# Strong regularisation (500 items), and a decision bias toward the rarer answers (no, maybe): the
# probabilities are multiplied by BIAS (folded into the intercept as log BIAS). Both were chosen on
# 5-fold cross-validated accuracy and macro-F1 together, among a handful of values (C 0.01 to 0.3; BIAS
# from none to 1 / 1.4 / 2.5; class_weight none or balanced), never on single items. The bias toward "no" is
# 1.0 since round 16's fifth part (1.1 before, 1.2 before that): in the whole loop (bench/eval_cv.py, replayed
# by bench/replay_verdict.py) 1.0 was chosen in 4 of 5 outer folds of a nested selection with the verdict's
# UNREAD_CLEAR_SHARE once the reader read arms' labels and turned comparator-first units
# (phases/16_result_reader.md, round 5). Round 24 (phases/24_harness_training.md) chose again, in the whole loop
# with nested 5-fold CV by item (bench/replay_verdict.py: class_weight none or balanced, bias toward no 1.0 or
# 1.5, toward maybe 1.0 or 1.5): balanced was never chosen (loop accuracy 0.35 to 0.44); a bias toward no of 1.5
# brings the yes count to the gold's (263 against 276, from 341) but costs accuracy (0.530 against 0.562) for no
# macro-F1 (0.422 against 0.427). These settings are the best on every item's 5-fold figures, so they stay.
C = 0.01
BIAS = (1.0, 1.0, 1.5)
CLASS_WEIGHT = "none"
# Two made-up items (written for this check, not taken from any data set) whose text fires every cue of
# ``stance._CUES`` and ``stance._QUESTION_CUES`` and gives the result reader a comparison to read: their features,
# recorded in the sidecar at ``--write`` (``feature_probe``), are what ``tests/test_training_provenance.py`` compares
# with ``stance.features`` today. A change to a cue, the splitter, the sections or the result reader moves them, and
# the test then asks for a refit (the weights were fitted on the features as they were).
PROBES = (
    (
        "Does early mobilisation reduce the length of hospital stay after hip fracture surgery compared with "
        "usual care?",
        "BACKGROUND: Bed rest after hip fracture surgery may prolong recovery. METHODS: We randomised 212 older "
        "adults to mobilisation within 24 hours or usual care. RESULTS: Early mobilisation significantly reduced "
        "the length of hospital stay (8.1 vs 10.4 days; mean difference -2.3, 95% CI -3.4 to -1.2; p<0.001) and "
        "improved walking ability at discharge (62% vs 48%, p=0.03). Mortality at 30 days was similar (4% vs 5%, "
        "p=0.62), and there was no significant difference in wound complications. However, delirium was more "
        "frequent in older patients, although this was not significant. CONCLUSIONS: Early mobilisation shortens "
        "the stay without more harm.",
    ),
    (
        "Is high serum ferritin associated with mortality in sepsis, or is it not a useful risk factor?",
        "Ferritin rises in inflammation. In 340 adults with sepsis, serum ferritin was measured on admission. "
        "Ferritin did not predict 28-day mortality (odds ratio 1.10, 95% CI 0.82 to 1.47; p=0.41), and survivors "
        "and non-survivors had comparable levels. A non-significant trend toward higher ferritin was seen in "
        "patients with liver failure. The association with death was no longer present after adjustment, "
        "suggesting that ferritin may be a marker of inflammation rather than of risk. Neither lactate nor "
        "ferritin was useful without clinical scores.",
    ),
)


def as_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    parsed = ast.literal_eval(str(value))
    return [str(v) for v in parsed]


def document_text(pmid: str, item: dict[str, object]) -> str:
    """The abstract as the library stores it (see ``deepcritical.evaluation.pubmedqa_scifact``): labelled sections."""
    contexts, labels = as_list(item["CONTEXTS"]), as_list(item.get("LABELS", []))
    labels += [""] * (len(contexts) - len(labels))
    body = " ".join(
        f"{label.upper()}: {text}" if label else text for label, text in zip(labels, contexts, strict=False)
    )
    return f"PubMedQA document {pmid}. {body}"


def load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rows, labels = [], []
    for pmid, item in data.items():
        rows.append(features(str(item["QUESTION"]), document_text(pmid, item)))
        labels.append(STANCES.index(str(item["final_decision"])))
    return np.stack(rows), np.asarray(labels)


def class_weight_of(name: str) -> str | None:
    """scikit-learn's ``class_weight`` for a setting's name (``none`` or ``balanced``)."""
    return None if name == "none" else name


def fit(
    rows: np.ndarray,
    labels: np.ndarray,
    class_weight: dict[int, float] | str | None,
    bias: tuple[float, float, float] | None = None,
) -> StanceModel:
    """The model on ``rows``; ``bias`` (else ``BIAS``) multiplies its probabilities, folded into the intercept."""
    mean, scale = rows.mean(axis=0), rows.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=C, max_iter=2000, class_weight=class_weight)
    model.fit((rows - mean) / scale, labels)
    return StanceModel(mean, scale, model.coef_, model.intercept_ + np.log(np.asarray(bias or BIAS)))


def cross_validate(rows: np.ndarray, labels: np.ndarray, class_weight: dict[int, float] | str | None) -> np.ndarray:
    """Each item predicted by a model fitted on the other folds; folds by item (one PubMedQA item is one question
    and its abstract), stratified by label."""
    predicted = np.zeros_like(labels)
    for train, test in StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED).split(rows, labels):
        model = fit(rows[train], labels[train], class_weight)
        predicted[test] = model.probabilities(rows[test]).argmax(axis=1)
    return predicted


def feature_probe() -> list[dict[str, object]]:
    """The stance features of ``PROBES`` as ``stance.features`` computes them now: recorded in the sidecar when
    the weights are written, so that a test fails when the features change without a refit."""
    return [
        {"question": question, "text": text, "features": features(question, text).tolist()} for question, text in PROBES
    ]


def largest_difference(fitted: object, shipped: object) -> float | None:
    """The largest difference between two models' numbers; None when their keys, texts or shapes differ."""
    if isinstance(fitted, dict) and isinstance(shipped, dict):
        if fitted.keys() != shipped.keys():
            return None
        gaps = [largest_difference(fitted[key], shipped[key]) for key in fitted]
    elif isinstance(fitted, list | tuple) and isinstance(shipped, list | tuple):
        if len(fitted) != len(shipped):
            return None
        gaps = [largest_difference(a, b) for a, b in zip(fitted, shipped, strict=True)]
    elif isinstance(fitted, int | float) and isinstance(shipped, int | float):
        return abs(float(fitted) - float(shipped))
    else:
        return 0.0 if fitted == shipped else None
    return None if None in gaps else max(gaps, default=0.0)


def counts(labels: np.ndarray) -> list[int]:
    """How many of each answer (yes, no, maybe)."""
    return np.bincount(labels, minlength=len(STANCES)).tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help=f"fit on every item and write {OUT.name}")
    action.add_argument("--verify", action="store_true", help=f"fit on every item: is it the shipped {OUT.name}?")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: no such file (PubMedQA's pqal_dev.json, in ../shared/data/pubmedqa)")
    rows, labels = load(args.data)
    majority = np.bincount(labels).max() / len(labels)
    print(f"items {len(labels)}; gold yes/no/maybe {counts(labels)}; majority baseline accuracy {majority:.3f}")
    weight = class_weight_of(CLASS_WEIGHT)
    predicted = cross_validate(rows, labels, weight)
    accuracy = accuracy_score(labels, predicted)
    macro = f1_score(labels, predicted, average="macro")
    print(f"C {C}, class_weight {CLASS_WEIGHT}, decision bias {BIAS}: 5-fold CV by item:")
    print(f"  accuracy {accuracy:.3f}, macro-F1 {macro:.3f}, predicted yes/no/maybe {counts(predicted)}")
    print("  confusion (rows gold yes/no/maybe, columns predicted):", confusion_matrix(labels, predicted).tolist())
    if not (args.write or args.verify):
        return
    model = fit(rows, labels, weight)
    payload = {
        **model.to_json(),
        "trained_on": "PubMedQA PQA-L, items outside the official test split (MIT licence)",
        "class_weight": CLASS_WEIGHT,
        "C": C,
        "decision_bias": list(BIAS),
    }
    text = json.dumps(payload, indent=1) + "\n"
    hashes = data_hashes([args.data.resolve()])
    if args.verify:
        shipped = json.loads(OUT.read_text(encoding="utf-8"))
        gap = largest_difference(payload, shipped)
        if gap is None or gap > TOLERANCE:
            shown = "other keys or features" if gap is None else f"a weight differs by {gap:.3g}"
            sys.exit(f"not reproduced: the model fitted now differs from the shipped {OUT.name} ({shown})")
        same = "the same file" if text == OUT.read_text(encoding="utf-8") else f"the same numbers to {gap:.1g}"
        record_verification(ARTEFACT, f"yes: `{this_command()}` at commit {git_commit()} fits {same}", hashes)
        print(f"reproduced: {OUT.name}; recorded in {ARTEFACT.sidecar.name} and {ARTEFACT.card.name}")
        return
    commit = git_commit()  # before the weights are written: after, the tree has changes
    OUT.write_text(text, encoding="utf-8")
    protocol = (
        f"the stance model alone on each item's own abstract: 5-fold cross-validation by item (stratified, seed "
        f"{SEED}) over the {len(labels)} items; the settings (class weight, decision bias) were chosen by the whole "
        "loop's nested cross-validation on the same items (bench/replay_verdict.py), so this figure is not "
        "independent of that choice"
    )
    figures = [
        {"measure": "accuracy", "value": round(float(accuracy), 4), "protocol": protocol},
        {"measure": "macro-F1", "value": round(float(macro), 4), "protocol": protocol},
        {
            "measure": "predicted yes",
            "value": counts(predicted)[0],
            "protocol": f"{protocol}; gold yes {counts(labels)[0]}",
        },
        {"measure": "majority baseline accuracy", "value": round(float(majority), 4), "protocol": "the same items"},
    ]
    record = {
        "title": "The code verdict's stance model",
        "script": "training/verdict_model.py",
        "command": this_command(),
        "commit": commit,
        "seed": SEED,
        "data": "PubMedQA PQA-L, the 500 labelled items outside its test split (MIT licence)",
        "data_sha256": hashes,
        "figures": figures,
        "parameters": {"C": C, "decision_bias": list(BIAS), "class_weight": CLASS_WEIGHT},
        "reproduced": "no: written by this command; not yet rebuilt by `--verify`",
        "feature_definition_sha256": feature_definition_sha256(),
        "feature_probe": feature_probe(),
    }
    write_provenance(ARTEFACT, record)
    print(f"wrote {OUT}, {ARTEFACT.sidecar} and {ARTEFACT.card}")


if __name__ == "__main__":
    main()
