"""The result classifiers read at run time, measured on Evidence Inference 2.0's validation articles: the
fine-tuned transformer (``reading/transformer_classifier.py``, ONNX Runtime, float32 and int8) against the
linear classifier and the two blended as the transformer reader reads them (``LINEAR_SHARE``), on the
doctors' evidence texts (the measure ``training/result_reader.py`` prints), with sentences read per second
(wall and per CPU second) and the machine's load; then the re-ranker (``reading/transformer_ranker.py``) on
each validation prompt's candidates, units per second, and the whole readers on whole articles.

    .venv/bin/python bench/result_classifier_bench.py            # both classifiers, every validation text
    .venv/bin/python bench/result_classifier_bench.py --limit 100
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))  # the training entries' data loading
from deepcritical.reading.results import LINEAR_SHARE, BlendedClassifier, ResultClassifier, ResultReader
from deepcritical.reading.transformer_classifier import TransformerClassifier, bundled_weights
from deepcritical.reading.transformer_ranker import CANDIDATES, TransformerRanker, bundled_ranker_weights
from result_reader import DATA, annotation_rows, load


def examples(ids: list[str], prompts, annotations):  # type: ignore[no-untyped-def]
    """(prompt id, comparison, text, label) per annotation: the very examples ``classifier_data`` trains on."""
    return list(annotation_rows(ids, prompts, annotations))


def measure(name: str, classifier: ResultClassifier, rows) -> None:  # type: ignore[no-untyped-def]
    """Each prompt's texts in one call, as ``ResultReader.read`` reads a comparison's units."""
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row[0], []).append(index)
    predicted = [""] * len(rows)
    wall, cpu = time.perf_counter(), time.process_time()
    for indices in groups.values():
        readings = classifier.probabilities([rows[i][2] for i in indices], rows[indices[0]][1])
        for i, reading in zip(indices, readings, strict=True):
            predicted[i] = max(reading, key=reading.__getitem__)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    f1 = f1_score([row[3] for row in rows], predicted, average="macro")
    print(
        f"{name}: validation macro-F1 {f1:.4f}; {len(rows) / wall:.0f} sentences/s wall, "
        f"{len(rows) / cpu:.0f} per CPU second ({len(rows)} sentences, {len(groups)} calls, "
        f"load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="read only the first N validation texts")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"{DATA} is missing: the Evidence Inference data is needed to measure the classifiers")
    weights = bundled_weights()
    if weights is None:
        sys.exit("reading/result_classifier.safetensors is missing: run training/result_classifier.py")
    prompts, annotations, splits = load()
    validation = sorted(p for p in annotations if splits.get(prompts[p].pmcid) == "validation")
    rows = examples(validation, prompts, annotations)
    rows = rows[: args.limit] if args.limit else rows
    print(f"{len(rows)} validation evidence texts; {os.cpu_count()} CPUs")
    from deepcritical.evidence.embeddings import resolve_model

    model_dir = Path(resolve_model(None).location)
    measure("linear classifier", ResultReader.from_json(_linear_json()).classifier, rows)
    ranker_weights = bundled_ranker_weights()
    with tempfile.TemporaryDirectory() as cache:
        for quantized in (False, True):
            started = time.perf_counter()
            classifier = TransformerClassifier.load(weights, model_dir, Path(cache), quantized=quantized)
            print(f"transformer graph built and loaded in {time.perf_counter() - started:.1f} s")
            measure(f"transformer ({'int8' if quantized else 'float32'})", classifier, rows)
        linear = ResultReader.load().classifier
        measure(
            f"transformer (int8) blended with the linear, share {LINEAR_SHARE}",
            BlendedClassifier(classifier, linear, LINEAR_SHARE),
            rows,
        )
        if ranker_weights is not None:
            candidates = ranked_candidates(validation, prompts, args.limit)
            for quantized in (False, True):
                ranker = TransformerRanker.load(ranker_weights, model_dir, Path(cache), quantized=quantized)
                measure_ranker(f"re-ranker ({'int8' if quantized else 'float32'})", ranker, candidates)
            articles = article_prompts(validation, prompts, args.limit)
            measure_reader("whole reader, linear", ResultReader.load(), articles)
            for quantized in (False, True):
                reader = ResultReader(
                    ResultReader.load().ranker,
                    BlendedClassifier(
                        TransformerClassifier.load(weights, model_dir, Path(cache), quantized=quantized),
                        linear,
                        LINEAR_SHARE,
                    ),
                    TransformerRanker.load(ranker_weights, model_dir, Path(cache), quantized=quantized),
                )
                measure_reader(f"whole reader, transformer ({'int8' if quantized else 'float32'})", reader, articles)
            print(
                "The issue's 200 sentences/s is judged here by the transformer-read rate (every unit a transformer "
                "reads counts); the article-sentence rate counts every unit the reader weighs, most of them by "
                "the linear ranker alone."
            )


def ranked_candidates(ids: list[str], prompts, limit: int):  # type: ignore[no-untyped-def]
    """Each validation prompt's comparison with the linear ranker's best units and their logits, as
    ``ResultReader.rank`` hands them to the re-ranker."""
    from deepcritical.evaluation.evidence_inference import article_units
    from deepcritical.reading.comparison import Comparison
    from deepcritical.reading.result_features import ranker_features
    from deepcritical.reading.results import best_outcome_share

    linear = ResultReader.load()
    out = []
    for prompt_id in ids[: limit or None]:
        prompt = prompts[prompt_id]
        units = article_units(DATA, prompt.pmcid)[1]
        comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
        best = best_outcome_share(units, comparison)
        scored = sorted(
            ((linear.ranker.scores(ranker_features(u, comparison, best))[0], u) for u in units),
            key=lambda pair: (-pair[0], pair[1].start),
        )[:CANDIDATES]
        out.append((comparison, [u for _, u in scored], [logit for logit, _ in scored]))
    return out


def measure_ranker(name: str, ranker: TransformerRanker, candidates) -> None:  # type: ignore[no-untyped-def]
    """Each prompt's candidates in one call, as ``ResultReader.rank`` re-ranks them."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = 0
    for comparison, units, logits in candidates:
        ranker.scores(units, comparison, logits)
        count += len(units)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"{name}: {count / wall:.0f} units/s wall, {count / cpu:.0f} per CPU second ({count} units, "
        f"{len(candidates)} calls, load {os.getloadavg()[0]:.1f})",
        flush=True,
    )


def article_prompts(ids: list[str], prompts, limit: int):  # type: ignore[no-untyped-def]
    """Each validation prompt's comparison with its whole article's units, as ``eval evidence-inference``
    reads them (split once here: splitting the text is the documents' work, not the reader's)."""
    from deepcritical.evaluation.evidence_inference import article_units
    from deepcritical.reading.comparison import Comparison

    units_of: dict[str, list] = {}  # type: ignore[type-arg]
    out = []
    for prompt_id in ids[: limit or None]:
        prompt = prompts[prompt_id]
        if prompt.pmcid not in units_of:
            units_of[prompt.pmcid] = article_units(DATA, prompt.pmcid)[1]
        comparison = Comparison.of(prompt.intervention, prompt.comparator, prompt.outcome)
        out.append((comparison, units_of[prompt.pmcid]))
    return out


def measure_reader(name: str, reader: ResultReader, articles) -> None:  # type: ignore[no-untyped-def]
    """``ResultReader.read`` on whole articles: article sentences (units) weighed per second (the linear
    ranker scores every one), and, with a transformer, the units it reads per second (the re-ranker's
    candidates and the classified units)."""
    from deepcritical.reading import result_features

    # Each reader starts cold: a study's units are scored again for each of its comparisons (the eval's
    # order), so the per-unit cache serves within a measurement, never from the one before.
    result_features._unit_features.cache_clear()
    result_features.stem_set.cache_clear()
    wall, cpu = time.perf_counter(), time.process_time()
    classified = sum(len(reader.read(units, comparison).evidence) for comparison, units in articles)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    weighed = sum(len(units) for _, units in articles)
    line = (
        f"{name}: {weighed / wall:.0f} article sentences/s wall, {weighed / cpu:.0f} per CPU second "
        f"({weighed} units in {len(articles)} comparisons, {wall:.1f} s"
    )
    if reader.reranker is not None:
        read = classified + sum(min(reader.reranker.candidates, len(units)) for _, units in articles)
        line += f"; transformer-read units {read / wall:.0f}/s wall, {read / cpu:.0f} per CPU second ({read})"
    print(f"{line}; load {os.getloadavg()[0]:.1f})", flush=True)


def _linear_json():  # type: ignore[no-untyped-def]
    import gzip
    import json
    from importlib import resources

    from deepcritical.reading.results import WEIGHTS_FILE

    return json.loads(gzip.decompress(resources.files("deepcritical.reading").joinpath(WEIGHTS_FILE).read_bytes()))


if __name__ == "__main__":
    main()
