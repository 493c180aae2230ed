"""Fit (and cross-validate) the statistics reader's number tagger (``deepcritical.reading.number_tagger``): a
logistic regression that says which numbers of a text are a group's leading value, trained on the hand-labelled
sets of the statistics reader.

Data: every labelled set but round 4's held-out half (bench/effects_labels.json, effects_labels_validation.json,
stats_labels.json, stats_labels_second.json, stats_labels_third.json both halves, stats_labels_fourth.json's
development half), the texts read from ``../shared/data`` by the pointers the sets hold. A number is a positive
where a labelled group's value (as written) begins; a value labelled in other words than the text's ("3" for
"three") marks the numbers of that value.

    PYTHONPATH=src python training/number_tagger.py              # grouped CV of every variant (phases/23_readers.md)
    PYTHONPATH=src python training/number_tagger.py --write      # ... then fit the chosen variant on all, write it
    PYTHONPATH=src python training/number_tagger.py --verify     # fit the chosen variant on all: the shipped file?

``--verify`` runs no cross-validation and writes no weights: it exits 1 unless the fit is the shipped
``number_tagger.json`` byte for byte, and on a match records so in the sidecar and card.

Protocol: 5-fold cross-validation grouped by article (an article's texts, from any set, fall in one fold; seed
below); each variant's out-of-fold readings are pooled and scored by bench/stats_bench.py's figures (F1 of p-values,
estimates and group values, significance). The variant shipped is the one with the best pooled group-values F1
that loses no more than 0.005 of p-value or estimate F1 to the rules alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from deepcritical.reading import patterns as pt
from deepcritical.reading.number_tagger import WEIGHTS, GroupTagger
from deepcritical.reading.statistics import number_features, read_effects
from provenance import (
    ROOT,
    artefact,
    data_hashes,
    git_commit,
    record_verification,
    this_command,
    write_provenance,
)

sys.path.insert(0, str(ROOT / "bench"))
from effects_bench import groups_key
from effects_devset import DATA as EI_DATA
from effects_devset import evidence_texts
from stats_bench import FOURTH, SECOND, THIRD, figures, load
from stats_devset import article_of, fourth_half_of

SEED = 39
FOLDS = 5
ARTEFACT = artefact("number_tagger")
# (C, threshold, mode) tried; "rules" is the reader without the tagger.
VARIANTS: list[tuple[float, float, str]] = [
    (c, t, mode) for mode in ("filter", "hybrid") for c in (0.1, 1.0) for t in (0.3, 0.4, 0.5, 0.6)
]
CHOSEN = (1.0, 0.4, "hybrid")  # the best by the rule of the docstring, from the log in phases/23_readers.md


def labelled() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every labelled entry the tagger may learn from, and the texts by id (round 4's held-out half left out)."""
    bench = ROOT / "bench"
    entries: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    evidence = {**evidence_texts("train"), **evidence_texts("validation")}
    for name in ("effects_labels.json", "effects_labels_validation.json"):
        for entry in json.loads((bench / name).read_text(encoding="utf-8")):
            entries.append({**entry, "id": f"ei:{entry['id']}"})
            texts[f"ei:{entry['id']}"] = evidence[entry["id"]]
    for path in (bench / "stats_labels.json", SECOND, THIRD, FOURTH):
        labels, by_id = load(path)
        if path == FOURTH:
            labels = [entry for entry in labels if fourth_half_of(entry["id"]) == "development"]
        entries += labels
        texts.update((entry["id"], by_id[entry["id"]]) for entry in labels)
    return entries, texts


def tagged(entry: dict[str, Any], text: str) -> tuple[list[list[str]], list[int]]:
    """Each number's features and whether a labelled group's value begins there."""
    plain, tokens, rows = number_features(text)
    starts = {token.start: index for index, token in enumerate(tokens)}
    positive = [0] * len(tokens)
    for result in entry["results"]:
        if result["measure"] != "group_values":
            continue
        at = 0
        for group in result["groups"]:
            written = pt.normalised(group)
            position = plain.find(written, at)
            if position >= 0 and position in starts:
                positive[starts[position]] = 1
                at = position + len(written)
                continue
            wanted = groups_key([group])[0]
            for index, token in enumerate(tokens):
                if abs(token.value) == wanted:
                    positive[index] = 1
    return rows, positive


def fit(rows: list[list[str]], targets: list[int], c: float, threshold: float, mode: str) -> GroupTagger:
    vectorizer = DictVectorizer()
    matrix = vectorizer.fit_transform([dict.fromkeys(row, 1) for row in rows])
    model = LogisticRegression(C=c, max_iter=2000, random_state=SEED)
    model.fit(matrix, targets)
    names = vectorizer.get_feature_names_out()
    weights = {str(name): round(float(w), 5) for name, w in zip(names, model.coef_[0], strict=True) if abs(w) > 1e-6}
    return GroupTagger(weights, round(float(model.intercept_[0]), 5), threshold, mode)


def cross_validate(entries: list[dict[str, Any]], texts: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    data = [tagged(entry, texts[entry["id"]]) for entry in entries]
    groups = [article_of(entry["id"]) for entry in entries]
    folds = list(GroupKFold(n_splits=FOLDS, shuffle=True, random_state=SEED).split(entries, groups=groups))
    log = [("rules alone", figures(entries, texts, read=lambda text: read_effects(text, None)))]
    for c, threshold, mode in VARIANTS:
        readings: dict[str, list[Any]] = {}
        for train, test in folds:
            rows = [row for index in train for row in data[index][0]]
            targets = [target for index in train for target in data[index][1]]
            tagger = fit(rows, targets, c, threshold, mode)
            for index in test:
                text = texts[entries[index]["id"]]
                readings[text] = read_effects(text, tagger)
        log.append((f"C {c} threshold {threshold} {mode}", figures(entries, texts, read=readings.__getitem__)))
    return log


def _line(name: str, found: dict[str, Any]) -> str:
    cells = "  ".join(f"{kind} {found[kind]['f1']:.3f}" for kind in ("p", "estimate", "groups"))
    return f"{name:<32} {cells}  significance {found['significance']:.3f} ({found['judged']})"


def fit_chosen(entries: list[dict[str, Any]], texts: dict[str, str]) -> tuple[GroupTagger, str]:
    """The chosen variant fitted on every labelled text, and the weights file's text for it."""
    rows, targets = [], []
    for entry in entries:
        entry_rows, entry_targets = tagged(entry, texts[entry["id"]])
        rows += entry_rows
        targets += entry_targets
    tagger = fit(rows, targets, *CHOSEN)
    weights = {"weights": dict(sorted(tagger.weights.items())), "bias": tagger.bias}
    weights |= {"threshold": tagger.threshold, "mode": tagger.mode}
    return tagger, json.dumps(weights, indent=0, sort_keys=True) + "\n"


def data_read() -> dict[str, str]:
    bench = ROOT / "bench"
    data_files = [bench / name for name in ("effects_labels.json", "effects_labels_validation.json")]
    data_files += [bench / "stats_labels.json", SECOND, THIRD, FOURTH]
    return data_hashes([EI_DATA / "annotations.csv", EI_DATA / "splits.csv", *data_files])


def verify(entries: list[dict[str, Any]], texts: dict[str, str]) -> None:
    _tagger, text = fit_chosen(entries, texts)
    if text != WEIGHTS.read_text(encoding="utf-8"):
        sys.exit(f"not reproduced: the tagger fitted now differs from the shipped {WEIGHTS.name}")
    reproduced = f"yes: `{this_command()}` at commit {git_commit()} fits the same file"
    record_verification(ARTEFACT, reproduced, data_read())
    print(f"reproduced: {WEIGHTS.name}; recorded in {ARTEFACT.sidecar.name} and {ARTEFACT.card.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="fit the chosen variant on every text and ship it")
    action.add_argument("--verify", action="store_true", help="fit the chosen variant: is it the shipped file?")
    args = parser.parse_args()
    entries, texts = labelled()
    if args.verify:
        verify(entries, texts)
        return
    print(f"{len(entries)} texts, {sum(len(e['results']) for e in entries)} results, {FOLDS}-fold grouped CV")
    log = cross_validate(entries, texts)
    for name, found in log:
        print(_line(name, found))
    if not args.write:
        return
    chosen_name = f"C {CHOSEN[0]} threshold {CHOSEN[1]} {CHOSEN[2]}"
    chosen = dict(log)[chosen_name]
    rules = dict(log)["rules alone"]
    tagger, text = fit_chosen(entries, texts)
    commit = git_commit()  # before the weights are written: after, the tree has changes
    WEIGHTS.write_text(text, encoding="utf-8")
    protocol = (
        f"{FOLDS}-fold cross-validation grouped by article (seed {SEED}) over {len(entries)} labelled texts (every "
        "set but round 4's held-out half), out-of-fold readings pooled, scored as bench/stats_bench.py; the variant "
        f"was chosen among {len(VARIANTS)} on these same figures"
    )
    figures_out = [
        {"measure": f"{kind} F1, {label}", "value": round(found[kind]["f1"], 4), "protocol": protocol}
        for label, found in (("with the tagger", chosen), ("rules alone", rules))
        for kind in ("p", "estimate", "groups")
    ]
    figures_out.append(
        {"measure": "significance, with the tagger", "value": round(chosen["significance"], 4), "protocol": protocol}
    )
    record = {
        "title": "The statistics reader's number tagger (which numbers are groups' values)",
        "script": "training/number_tagger.py",
        "command": this_command(),
        "commit": commit,
        "seed": SEED,
        "data": "hand labels in bench/stats_labels*.json and effects_labels*.json (round 4's held-out half left "
        "out); texts from Evidence Inference 2.0 (MIT), PubMedQA PQA-L contexts (MIT), MedEvidence development "
        "abstracts, in ../shared/data",
        "data_sha256": data_read(),
        "reproduced": "no: written by this command; not yet rebuilt by `--verify`",
        "figures": figures_out,
        "parameters": {"C": CHOSEN[0], "threshold": CHOSEN[1], "mode": CHOSEN[2], "features": len(tagger.weights)},
    }
    write_provenance(ARTEFACT, record)
    print(f"wrote {WEIGHTS.relative_to(ROOT)} ({len(tagger.weights)} weights) and {ARTEFACT.sidecar.name}")


if __name__ == "__main__":
    main()
