"""The transformer reader's blend with the linear classifier (``reading/results.py``'s ``LINEAR_SHARE``),
measured on Evidence Inference 2.0's validation articles as ``deepcritical eval evidence-inference --reader
transformer`` reads them (its ``predicted``), for several transformer classifiers (one per training
seed, so a share is chosen for the recipe, not for one draw) and several shares.

    .venv/bin/python bench/blend_share.py                                   # the shipped classifier
    .venv/bin/python bench/blend_share.py --classifiers s0.safetensors s1.safetensors --shares 0 0.4 0.5
    .venv/bin/python bench/blend_share.py --shares 0.4 --without-reranker     # the linear ranker's order alone

A seed's classifier is built by ``training/result_classifier.py ... --seed N --out sN.safetensors`` (the
shipped recipe is in ``phases/16_result_reader.md``). Prints macro-F1 per classifier and share, then the mean.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training entries' data loading
from deepcritical.evaluation.evidence_inference import article_units, predicted
from deepcritical.evidence.embeddings import resolve_model
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.result_features import LABELS
from deepcritical.reading.results import LINEAR_SHARE, BlendedClassifier, ResultClassifier, ResultReader, labelled_by
from deepcritical.reading.transformer_classifier import TransformerClassifier, bundled_weights
from deepcritical.reading.transformer_ranker import TransformerRanker, bundled_ranker_weights
from deepcritical.reading.units import TextUnit
from result_reader import DATA, load, majority


class Remembered:
    """A classifier or re-ranker that reads each (texts, comparison) once: shares differ only in the blend."""

    def __init__(self, inner: ResultClassifier) -> None:
        self.inner = inner
        self.seen: dict[tuple[tuple[str, ...], Comparison], list[dict[str, float]]] = {}

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        key = (tuple(texts), comparison)
        if key not in self.seen:
            self.seen[key] = self.inner.probabilities(texts, comparison)
        return self.seen[key]


class RememberedRanker:
    def __init__(self, inner: TransformerRanker) -> None:
        self.inner = inner
        self.candidates = inner.candidates
        self.seen: dict[tuple[tuple[str, ...], Comparison], list[float]] = {}

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        key = (tuple(unit.text for unit in units), comparison)
        if key not in self.seen:
            self.seen[key] = self.inner.scores(units, comparison, linear)
        return self.seen[key]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--classifiers", type=Path, nargs="*", help="transformer classifiers' weights files")
    parser.add_argument("--shares", type=float, nargs="*", default=[0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0])
    parser.add_argument(
        "--without-reranker", action="store_true", help="read the linear ranker's best units, not the re-ranker's"
    )
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed to measure the blend")
    ranker_weights = bundled_ranker_weights()
    classifiers = args.classifiers or [bundled_weights()]
    if ranker_weights is None or None in classifiers:
        sys.exit("the transformer re-ranker's or classifier's weights are missing: see training/result_*.py")
    prompts, annotations, splits = load()
    # By article, so each article's units are split once.
    ids = sorted(
        (p for p in annotations if splits.get(prompts[p].pmcid) == "validation"), key=lambda p: (prompts[p].pmcid, p)
    )
    gold = [majority(annotations[p]) for p in ids]
    model_dir = Path(resolve_model(None).location)
    linear = ResultReader.load()
    linear_classifier = Remembered(linear.classifier)
    print(f"{len(ids)} validation prompts; linear share shipped: {LINEAR_SHARE}", flush=True)
    table: dict[float, list[float]] = {share: [] for share in args.shares}
    with tempfile.TemporaryDirectory() as cache:
        reranker = (
            None
            if args.without_reranker
            else RememberedRanker(TransformerRanker.load(ranker_weights, model_dir, Path(cache), quantized=True))
        )
        for path in classifiers:
            transformer = Remembered(TransformerClassifier.load(path, model_dir, Path(cache), quantized=True))
            row = []
            for share in args.shares:
                reader = ResultReader(linear.ranker, BlendedClassifier(transformer, linear_classifier, share), reranker)
                labels: list[str] = []
                units_of: tuple[str, list[TextUnit]] = ("", [])
                for prompt_id in ids:
                    prompt = prompts[prompt_id]
                    if units_of[0] != prompt.pmcid:
                        units_of = (prompt.pmcid, article_units(DATA, prompt.pmcid)[1])
                    comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
                    comparison = labelled_by(comparison, units_of[1])
                    labels.append(predicted(reader, units_of[1], comparison)[1])
                f1 = f1_score(gold, labels, average="macro", labels=list(LABELS))
                table[share].append(f1)
                row.append(f"{share}: {f1:.4f}")
            print(f"{path.name}: " + ", ".join(row), flush=True)
    for share, scores in table.items():
        print(f"share {share}: mean macro-F1 {sum(scores) / len(scores):.4f} over {len(scores)} classifier(s)")


if __name__ == "__main__":
    main()
