r"""Does the transformer result reader read the same on every CPU? Its int8 graphs, measured on both kernel paths.

    python bench/reader_cpu_paths.py --graphs DIR --save vnni.npz               # natively (VNNI)
    qemu-x86_64 -cpu EPYC-Rome .venv/bin/python bench/reader_cpu_paths.py --graphs DIR --save avx2.npz \
        --compare vnni.npz                                                      # AVX2, no AVX-512 or VNNI

``--reader transformer`` reads each study with two fine-tuned encoders run by ONNX Runtime through int8
graphs (``reading/transformer_classifier.py``, ``reading/transformer_ranker.py``). Their products are u8s8,
like the old int8 embedding graph's: exact int32 sums with VNNI, int16 pair sums that saturate for 8-bit
weights on AVX2 alone (``phases/23_cpu_stable_embeddings.md``). The runtime picks the kernel from the CPU, so
the AVX2 path runs on an emulated CPU (QEMU's ``EPYC-Rome``: an AMD EPYC with AVX2 and FMA, no AVX-512, no
VNNI); the script prints the features it sees. Build the graphs natively once (``--graphs``): the emulated
run reuses them, so both CPUs run the same bytes.

Options: ``int8`` (as shipped: 8-bit weights, one scale per output channel), ``int7`` (the same with 7-bit
weights, ``reduce_range``: a pair of products cannot reach int16's limit), ``float32``.

Protocol: the first ``--limit`` Evidence Inference 2.0 validation prompts (the authors' split, in file
order), read as ``eval evidence-inference --reader transformer`` reads them (``evaluation.evidence_inference.predict``:
the article's full text, the linear ranker's best 8 units re-scored, the best read and blended with the
linear classifier). Recorded per option: every classifier logit (keyed by prompt, comparison and text) and
every re-ranker score (keyed by prompt and unit), each prompt's label and its first evidence unit. Printed:
macro-F1 and accuracy against the doctors' labels, evidence found first; against float32 and (with
``--compare``) against the same option on the other CPU: max |delta logit| of the classifier and of the
re-ranker, the share of classifier readings with the same label (argmax), of re-ranked candidates in the same
first place, of prompts with the same label and the same first evidence. Nothing is tuned on these prompts.
Units/s: transformer-read units per second of reading (natively only; under emulation it means nothing).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog

from deepcritical.evaluation.evidence_inference import predict, read_prompts, score, split_of
from deepcritical.reading import transformer_classifier
from deepcritical.reading.comparison import Comparison
from deepcritical.reading.results import LINEAR_SHARE, BlendedClassifier, ResultReader
from deepcritical.reading.transformer_classifier import TransformerClassifier, base_model_dir, bundled_weights
from deepcritical.reading.transformer_ranker import TransformerRanker, bundled_ranker_weights
from deepcritical.reading.units import TextUnit

OPTIONS = {"int8": (True, False), "int7": (True, True), "float32": (False, False)}  # quantized, reduce_range


def cpu_features() -> str:
    from numpy._core._multiarray_umath import __cpu_features__ as features  # what the CPU (or QEMU) reports

    return ", ".join(
        f"{name} {'yes' if features.get(name) else 'no'}" for name in ("AVX2", "AVX512F", "AVX512BW", "AVX512_ICL")
    )


class Recorder:
    """Every classifier logit and re-ranker score one option gives, keyed so that two runs can be matched."""

    def __init__(self) -> None:
        self.prompt = ""
        self.texts: list[str] = []
        self.comparison = ""
        self.logits: dict[str, list[float]] = {}
        self.ranks: dict[str, list[float]] = {}
        self.first: dict[str, str] = {}  # each re-ranked candidate list's first unit
        self.units = 0
        self.seconds = 0.0


RECORDER = Recorder()
_softmax = transformer_classifier._softmax


def _recording_softmax(scores: Any) -> Any:
    for text, row in zip(RECORDER.texts, scores, strict=True):
        RECORDER.logits[f"{RECORDER.prompt}|{RECORDER.comparison}|{text}"] = [float(value) for value in row]
    return _softmax(scores)


class RecordingClassifier:
    def __init__(self, inner: TransformerClassifier) -> None:
        self.inner = inner

    def probabilities(self, texts: Sequence[str], comparison: Comparison) -> list[dict[str, float]]:
        RECORDER.texts, RECORDER.comparison = list(texts), "|".join(comparison.written)
        began = time.perf_counter()
        result = self.inner.probabilities(texts, comparison)
        RECORDER.seconds += time.perf_counter() - began
        RECORDER.units += len(texts)
        return result


class RecordingRanker:
    def __init__(self, inner: TransformerRanker) -> None:
        self.inner = inner
        self.candidates = inner.candidates

    def scores(self, units: Sequence[TextUnit], comparison: Comparison, linear: Sequence[float]) -> list[float]:
        began = time.perf_counter()
        result = self.inner.scores(units, comparison, linear)
        RECORDER.seconds += time.perf_counter() - began
        RECORDER.units += len(units)
        key = f"{RECORDER.prompt}|{'|'.join(comparison.written)}"
        for unit, value in zip(units, result, strict=True):
            RECORDER.ranks[f"{key}|{unit.start}"] = [value]
        best = max(range(len(units)), key=lambda index: (result[index], -units[index].start))
        RECORDER.first[key] = str(units[best].start)
        return result


def run_option(name: str, args: argparse.Namespace, prompts: list[Any], graphs: Path) -> dict[str, Any]:
    quantized, reduce_range = OPTIONS[name]
    model_dir, weights, ranker_weights = base_model_dir(), bundled_weights(), bundled_ranker_weights()
    if model_dir is None or weights is None or ranker_weights is None:
        raise SystemExit("the transformer reader's weights or its base model are not installed")
    classifier = TransformerClassifier.load(weights, model_dir, graphs, quantized=quantized, reduce_range=reduce_range)
    ranker = TransformerRanker.load(ranker_weights, model_dir, graphs, quantized=quantized, reduce_range=reduce_range)
    linear = ResultReader.load()
    global RECORDER
    RECORDER = Recorder()
    blended = BlendedClassifier(RecordingClassifier(classifier), linear.classifier, LINEAR_SHARE)
    reader = ResultReader(linear.ranker, blended, RecordingRanker(ranker), name="transformer")
    # One prompt at a time, so the recorder knows whose readings it sees.
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        for prompt in prompts:
            RECORDER.prompt = prompt.id
            predict([prompt], args.articles, out, reader=reader, reader_name="transformer")
        summary = score(out / "predictions.jsonl", args.articles / "annotations.csv", reader_name="transformer")
        lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    labels = {line["id"]: line["prediction"] for line in lines}
    evidence = {line["id"]: (line["evidence"][0]["start"] if line["evidence"] else -1) for line in lines}
    return {
        "summary": summary,
        "logits": RECORDER.logits,
        "ranks": RECORDER.ranks,
        "first": RECORDER.first,
        "labels": labels,
        "evidence": evidence,
        "units_per_second": RECORDER.units / RECORDER.seconds if RECORDER.seconds else 0.0,
    }


def agreement(one: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """How far ``one``'s readings are from ``other``'s, over what both read."""

    def deltas(kind: str) -> tuple[float, int, int]:
        shared = one[kind].keys() & other[kind].keys()
        delta = max((float(np.max(np.abs(np.subtract(one[kind][k], other[kind][k])))) for k in shared), default=0.0)
        same = sum(int(np.argmax(one[kind][k]) == np.argmax(other[kind][k])) for k in shared)
        return delta, same, len(shared)

    logit, same_labels, readings = deltas("logits")
    rank, _, scored = deltas("ranks")
    firsts = one["first"].keys() & other["first"].keys()
    return {
        "max_delta_logit": logit,
        "readings": readings,
        "readings_same_label": same_labels,
        "max_delta_rank_score": rank,
        "rank_scores": scored,
        "same_first_candidate": sum(one["first"][k] == other["first"][k] for k in firsts),
        "candidate_lists": len(firsts),
        "prompts_same_label": sum(one["labels"][k] == other["labels"][k] for k in one["labels"]),
        "prompts_same_evidence": sum(one["evidence"][k] == other["evidence"][k] for k in one["evidence"]),
        "prompts": len(one["labels"]),
    }


def row(name: str, result: dict[str, Any], versus: dict[str, Any], extra: str = "") -> str:
    summary = result["summary"]
    return (
        f"| {name} | {summary['macro_f1']:.4f} | {summary['accuracy']:.4f} | {summary['evidence_found_first']} "
        f"| {versus['max_delta_logit']:.4f} | {versus['readings_same_label']}/{versus['readings']} "
        f"| {versus['max_delta_rank_score']:.4f} | {versus['same_first_candidate']}/{versus['candidate_lists']} "
        f"| {versus['prompts_same_label']}/{versus['prompts']} | {versus['prompts_same_evidence']}/{versus['prompts']} "
        f"| {result['units_per_second']:.0f} |{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=Path, default=Path("../shared/data/evidence-inference"))
    parser.add_argument("--split", default="validation")
    parser.add_argument("--limit", type=int, default=60, help="the first N prompts of the split")
    parser.add_argument("--only", nargs="*", default=list(OPTIONS), help="the options to run (float32: the reference)")
    parser.add_argument("--graphs", type=Path, required=True, help="the built graphs, kept and reused")
    parser.add_argument("--save", type=Path, help="write each option's readings here (.json)")
    parser.add_argument("--compare", type=Path, help="readings --save wrote on another CPU")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    print(f"CPU features: {cpu_features()}")
    split = split_of(args.articles)
    prompts = [p for p in read_prompts(args.articles / "prompts.csv") if split.get(p.pmcid) == args.split]
    prompts = prompts[: args.limit]
    print(f"{len(prompts)} {args.split} prompts of {len({p.pmcid for p in prompts})} articles")
    names = sorted(args.only, key=list(OPTIONS).index)
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        began = time.perf_counter()
        results[name] = run_option(name, args, prompts, args.graphs)
        print(f"{name}: {time.perf_counter() - began:.0f} s", flush=True)
    header = (
        "| option | macro-F1 | accuracy | evidence found first | max abs delta logit (classifier) "
        "| readings same label | max abs delta score (re-ranker) | same first candidate | prompts same label "
        "| prompts same first evidence | units/s |"
    )
    if "float32" in results:
        print("\nAgainst float32 on this CPU:\n" + header + "\n" + "|---" * 11 + "|")
        for name in names:
            print(row(name, results[name], agreement(results[name], results["float32"])))
    if args.save:
        args.save.write_text(json.dumps(results))
    if args.compare:
        other = json.loads(args.compare.read_text())
        print(f"\nAgainst the same option on the other CPU ({args.compare}):\n" + header + "\n" + "|---" * 11 + "|")
        for name in names:
            if name in other:
                print(row(name, results[name], agreement(results[name], other[name])))


if __name__ == "__main__":
    transformer_classifier._softmax = _recording_softmax  # type: ignore[assignment]
    main()
