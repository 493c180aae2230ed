"""The result reader's parts measured apart on Evidence Inference 2.0's validation articles (whole
articles, as ``deepcritical eval evidence-inference`` reads them): which ranker (linear, or the linear
one re-ranked by the transformer), which classifier, and how the read units' readings are combined.

    .venv/bin/python bench/result_reader_ablation.py                       # the shipped files
    .venv/bin/python bench/result_reader_ablation.py --ranker R.safetensors --classifier C.safetensors

Prints, per ranker, the doctors' evidence found by the first unit and among the first three, then per
classifier and way of combining, the macro-F1 and accuracy over the validation prompts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training entries' data loading
from deepcritical.evaluation.evidence_inference import article_units
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.conventions import stated_as_no_effect, stated_by_numbers, stated_by_p_values
from deepcritical.reading.result_features import LABELS
from deepcritical.reading.results import ResultClassifier, ResultReader
from deepcritical.reading.transformer_classifier import TransformerClassifier, bundled_weights
from deepcritical.reading.transformer_ranker import TransformerRanker, bundled_ranker_weights
from result_reader import DATA, load, majority, spans_of

DEPTH = 5  # units read per prompt at most, by any way of combining measured

Reading = dict[str, float]
Row = tuple[list[float], list[Reading], list[Reading | None]]  # rank probabilities, classifier, conventions


def rule(text: str) -> Reading | None:
    return stated_by_numbers(text) or stated_as_no_effect(text) or stated_by_p_values(text)


def combine(row: Row, units: int, power: float, rules: bool, only_rules_first: bool = False) -> str:
    """The label of the first ``units`` units' readings weighed by rank probability ** ``power``; with
    ``rules``, a unit's numbers or no-effect words settle its reading (``only_rules_first``: the first
    unit's only)."""
    probabilities, readings, conventions = row
    totals = dict.fromkeys(LABELS, 0.0)
    for index in range(min(units, len(readings))):
        reading = readings[index]
        if rules and (index == 0 or not only_rules_first):
            reading = conventions[index] or reading
        weight = probabilities[index] ** power
        for label, value in reading.items():
            totals[label] += weight * value
    return max(totals, key=totals.__getitem__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranker", type=Path, default=None, help="the re-ranker's weights (default: shipped)")
    parser.add_argument("--classifier", type=Path, default=None, help="the classifier's weights (default: shipped)")
    parser.add_argument("--int8", action="store_true", help="the transformers' int8 graphs")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed")
    from deepcritical.evidence.embeddings import resolve_model

    model_dir = Path(resolve_model(None).location)
    prompts, annotations, splits = load()
    ids = sorted(
        (p for p in annotations if splits.get(prompts[p].pmcid) == "validation"), key=lambda p: (prompts[p].pmcid, p)
    )
    linear = ResultReader.load()
    cache = Path(tempfile.mkdtemp(prefix="ablation-"))
    rankers: dict[str, ResultReader] = {"linear ranker": linear}
    ranker_weights = args.ranker or bundled_ranker_weights()
    if ranker_weights is not None:
        reranker = TransformerRanker.load(ranker_weights, model_dir, cache, quantized=args.int8)
        rankers["linear + transformer re-ranker"] = ResultReader(linear.ranker, linear.classifier, reranker)
    classifiers: dict[str, ResultClassifier] = {"linear classifier": linear.classifier}
    classifier_weights = args.classifier or bundled_weights()
    if classifier_weights is not None:
        classifiers["transformer classifier"] = TransformerClassifier.load(
            classifier_weights, model_dir, cache, quantized=args.int8
        )
    gold = [majority(annotations[p]) for p in ids]
    articles: dict[str, tuple[str, list]] = {}  # type: ignore[type-arg]
    for ranker_name, reader in rankers.items():
        ranked_all, found, found3, counted = [], 0, 0, 0
        started = time.perf_counter()
        for prompt_id in ids:
            prompt = prompts[prompt_id]
            if prompt.pmcid not in articles:
                articles.clear()
                articles[prompt.pmcid] = article_units(DATA, prompt.pmcid)
            kind, units = articles[prompt.pmcid]
            # The arms' labels read from the article, as ``ResultReader.read`` reads them.
            comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome).labelled(
                "\n".join(unit.text for unit in units)
            )
            ranked = reader.rank(units, comparison)[:DEPTH]
            ranked_all.append((comparison, ranked))
            spans = spans_of(annotations[prompt_id])
            if kind == "fulltext" and spans and ranked:
                counted += 1
                hits = [any(u.start < e and s < u.end for s, e in spans) for _, u in ranked]
                found += hits[0]
                found3 += any(hits[:3])
        seconds = time.perf_counter() - started
        print(
            f"{ranker_name}: evidence found by the first unit {found / counted:.4f}, among the first three "
            f"{found3 / counted:.4f} ({counted} prompts with full text; ranked in {seconds:.1f} s)",
            flush=True,
        )
        readings_of: dict[str, list[Row]] = {}
        for classifier_name, classifier in classifiers.items():
            rows: list[Row] = []
            started = time.perf_counter()
            # Read as ``ResultReader.read`` reads: a unit whose subject is the comparator, turned.
            reading = ResultReader(linear.ranker, classifier)
            for comparison, ranked in ranked_all:
                texts = [unit.text for _, unit in ranked]
                rows.append(([p for p, _ in ranked], reading.readings(texts, comparison), [rule(t) for t in texts]))
            seconds = time.perf_counter() - started
            print(f"  {classifier_name} ({seconds:.1f} s for {sum(len(r[0]) for r in rows)} units)")
            variants: dict[str, Callable[[Row], str]] = {
                "top 3, p^2, conventions (today)": lambda r: combine(r, 3, 2.0, True),
                "top 1, conventions": lambda r: combine(r, 1, 2.0, True),
                "top 2, p^2, conventions": lambda r: combine(r, 2, 2.0, True),
                "top 5, p^2, conventions": lambda r: combine(r, 5, 2.0, True),
                "top 3, p^1, conventions": lambda r: combine(r, 3, 1.0, True),
                "top 3, p^4, conventions": lambda r: combine(r, 3, 4.0, True),
                "top 3, equal weights, conventions": lambda r: combine(r, 3, 0.0, True),
                "top 3, p^2, no conventions": lambda r: combine(r, 3, 2.0, False),
                "top 1, no conventions": lambda r: combine(r, 1, 2.0, False),
                "top 3, p^2, conventions on the first unit only": lambda r: combine(r, 3, 2.0, True, True),
            }
            for name, variant in variants.items():
                predicted = [variant(row) if row[0] else "no_difference" for row in rows]
                report(f"    {name}", gold, predicted)
            readings_of[classifier_name] = rows
        if len(readings_of) == 2:
            # The two classifiers' readings averaged, the linear one's weighed by ``share``.
            linear_rows, transformer_rows = readings_of.values()
            print("  linear and transformer classifiers averaged (top 3, p^2, conventions)")
            for share in (0.2, 0.35, 0.5, 0.65, 0.8):
                predicted = []
                for (probabilities, first, rules), (_, second, _) in zip(linear_rows, transformer_rows, strict=True):
                    mixed = [
                        {label: share * a.get(label, 0.0) + (1 - share) * b.get(label, 0.0) for label in LABELS}
                        for a, b in zip(first, second, strict=True)
                    ]
                    row = (probabilities, mixed, rules)
                    predicted.append(combine(row, 3, 2.0, True) if probabilities else "no_difference")
                report(f"    linear share {share}", gold, predicted)


def report(name: str, gold: Sequence[str], predicted: Sequence[str]) -> None:
    f1 = f1_score(gold, predicted, average="macro", labels=list(LABELS))
    per = f1_score(gold, predicted, average=None, labels=list(LABELS))
    accuracy = sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold)
    print(f"{name}: macro-F1 {f1:.4f}, accuracy {accuracy:.4f} (F1 " + " / ".join(f"{v:.3f}" for v in per) + ")")


if __name__ == "__main__":
    main()
