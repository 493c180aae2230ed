r"""The statistics reader on texts its rules were not written on (issue 39): bench/stats_labels.json, read by
hand from the texts bench/stats_devset.py draws (Evidence Inference train evidence, PubMedQA RESULTS
contexts, MedEvidence development abstracts), labelled before any rule was changed; and round 2's
bench/stats_labels_second.json (stats_devset.py --second: articles in no other set, full-text Results paragraphs
too), also labelled before any rule changed, on which rules are chosen by 2-fold CV grouped by source.

    python bench/stats_bench.py                 # figures on the development part and the part set aside
    python bench/stats_bench.py --misses        # ... and each miss of the development part
    python bench/stats_bench.py --json          # the figures of every labelled set as JSON (the pinned test reads it)
    python bench/stats_bench.py --second [--misses-of FOLD]   # round 2's set per fold and source (no set-aside part)
    python bench/stats_bench.py --third [--misses]  # round 3's set: its development half per source (and misses)
    python bench/stats_bench.py --third --held-out  # ... and its held-out half, in aggregate (read once, at the end)
    python bench/stats_bench.py --fourth [--misses] [--held-out]  # round 4's set, as round 3's

Protocol: the texts are split once, before the reader's output on them was looked at, by article (an
Evidence Inference PMCID, a PubMedQA or MedEvidence PMID: one article's texts fall in one part), a third
set aside (``held_out``: its misses are never printed, its figures are read once at the end) and two thirds
to look at and write rules from (``development``). Figures per part and per source:

- p-values, estimates (value and interval, any measure), group values (each group's leading number, in
  order): precision, recall and F1 over the labelled items, as bench/effects_bench.py counts them;
- significance: of the labelled results the reader found, the share read as the label reads them;
- measure: of the estimates found, the share whose measure (OR, RR, HR, IRR, MD, SMD, RD, percent change)
  is the label's (IRR and RR count as one: "relative rate" is written for both);
- one arm or between arms: of the group values found, the share whose ``within_group`` is the label's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deepcritical.reading.statistics import read_effects
from effects_bench import HELD_OUT as EFFECTS_VALIDATION
from effects_bench import LABELS as EFFECTS_DEVELOPMENT
from effects_bench import as_result, keys, prf
from effects_devset import evidence_texts
from stats_devset import all_texts, fourth_half_of, half_of, sha, source_of

LABELS = Path(__file__).resolve().parent / "stats_labels.json"
# Round 2's labels (stats_devset.py --second): texts of articles no other set holds, labelled before any rule
# changed. Rules are chosen on it by 2-fold cross-validation grouped by text source: a change is written from one
# fold's misses and judged on the other fold, whose misses were not read for it.
SECOND = Path(__file__).resolve().parent / "stats_labels_second.json"
# Round 3's labels (stats_devset.py --third): texts of articles in no earlier set, labelled before any rule changed,
# halved by article within each source (stats_devset.half_of): rules are written from the development half's misses;
# the held-out half is read once, in aggregate, at the end.
THIRD = Path(__file__).resolve().parent / "stats_labels_third.json"
# Round 4's labels (stats_devset.py --fourth): drawn and labelled before any rule changed and before the tagger
# (reading/number_tagger.py) was trained, halved by article at draw time (stats_devset.fourth_half_of); the tagger's
# variants are chosen by CV grouped by source text over every set but the held-out half, read once at the end.
FOURTH = Path(__file__).resolve().parent / "stats_labels_fourth.json"
FOLDS = {"evidence_inference": ("ei", "eift"), "abstracts": ("pubmedqa", "medevidence")}
KINDS = ("p", "estimate", "groups")
_SAME_MEASURE = {"IRR": "RR"}


def article_of(text_id: str) -> str:
    """The article a text comes from: one article's texts stay in one part."""
    parts = text_id.split(":")
    return f"{parts[0]}:{parts[2] if parts[0] == 'medevidence' else parts[1]}"


def part_of(text_id: str) -> str:
    digest = hashlib.sha256(article_of(text_id).encode()).digest()
    return "held_out" if digest[0] % 3 == 0 else "development"


def load(path: Path = LABELS) -> tuple[list[dict[str, Any]], dict[str, str]]:
    labels = json.loads(path.read_text(encoding="utf-8"))
    texts = all_texts(full_text=path == SECOND, third=path in (THIRD, FOURTH))
    for entry in labels:
        if entry["id"] not in texts:
            raise SystemExit(f"stats_bench: {entry['id']} is not in ../shared/data")
        if sha(texts[entry["id"]]) != entry["sha"]:
            raise SystemExit(f"stats_bench: the text of {entry['id']} changed since it was labelled")
    return labels, texts


def figures(
    labels: list[dict[str, Any]],
    texts: dict[str, str],
    misses: list[str] | None = None,
    read: Callable[[str], list[Any]] = read_effects,
) -> dict[str, Any]:
    """The figures of the module docstring over ``labels`` as ``read`` reads them (the reader as shipped by
    default); each miss appended to ``misses`` when given."""
    gold: dict[str, Counter[Any]] = {kind: Counter() for kind in KINDS}
    found: dict[str, Counter[Any]] = {kind: Counter() for kind in KINDS}
    tally = Counter[str]()
    for entry in labels:
        text_id = entry["id"]
        effects = read(texts[text_id])
        predicted = [{**as_result(e), "within_group": e.within_group} for e in effects]
        entry_gold = {kind: Counter(k[kind] for k in map(keys, entry["results"]) if kind in k) for kind in KINDS}
        entry_found = {kind: Counter(k[kind] for k in map(keys, predicted) if kind in k) for kind in KINDS}
        for kind in KINDS:
            gold[kind].update({(text_id, key): n for key, n in entry_gold[kind].items()})
            found[kind].update({(text_id, key): n for key, n in entry_found[kind].items()})
            if misses is not None:
                for key in entry_gold[kind] - entry_found[kind]:
                    misses.append(f"{text_id} {kind} missed {key}")
                for key in entry_found[kind] - entry_gold[kind]:
                    misses.append(f"{text_id} {kind} extra {key}")
        for result in entry["results"]:
            label_keys = keys(result)
            match = next(
                (
                    other
                    for kind in ("estimate", "groups", "p")
                    for other in predicted
                    if kind in label_keys and keys(other).get(kind) == label_keys[kind]
                ),
                None,
            )
            if match is None:
                continue
            if result["significant"] is not None:
                tally["judged"] += 1
                right = match["significant"] == result["significant"]
                tally["significance"] += right
                if not right and misses is not None:
                    misses.append(f"{text_id} significance read {match['significant']}, labelled {result}")
            if "estimate" in label_keys and keys(match).get("estimate") == label_keys["estimate"]:
                tally["estimates"] += 1
                same = _SAME_MEASURE.get(match["measure"], match["measure"]) == _SAME_MEASURE.get(
                    result["measure"], result["measure"]
                )
                tally["measure"] += same
                if not same and misses is not None:
                    misses.append(f"{text_id} measure read {match['measure']}, labelled {result['measure']}")
            if "groups" in label_keys and keys(match).get("groups") == label_keys["groups"]:
                tally["groups"] += 1
                same = match["within_group"] == result.get("within_group", False)
                tally["arms"] += same
                if not same and misses is not None:
                    misses.append(f"{text_id} within_group read {match['within_group']} for {result['groups']}")
    out: dict[str, Any] = {"texts": len(labels), "results": sum(len(e["results"]) for e in labels)}
    for kind in KINDS:
        precision, recall, f1, n_gold, n_found = prf(gold[kind], found[kind])
        out[kind] = {"precision": precision, "recall": recall, "f1": f1, "labelled": n_gold, "read": n_found}
    out["significance"] = tally["significance"] / max(1, tally["judged"])
    out["judged"] = tally["judged"]
    out["measure"] = tally["measure"] / max(1, tally["estimates"])
    out["arms"] = tally["arms"] / max(1, tally["groups"])
    return out


def line(name: str, result: dict[str, Any]) -> str:
    cells = "  ".join(f"{kind} F1 {result[kind]['f1']:.3f} ({result[kind]['labelled']})" for kind in KINDS)
    return (
        f"{name:<26} {result['texts']:>3} texts {result['results']:>3} results  {cells}  significance "
        f"{result['significance']:.3f} ({result['judged']})  measure {result['measure']:.3f}  arms {result['arms']:.3f}"
    )


def every_figure() -> dict[str, Any]:
    """This set's parts and the first round's two sets (bench/effects_labels*.json, Evidence Inference texts)."""
    labels, texts = load()
    found: dict[str, Any] = {
        "stats_labels": {
            "development": figures([e for e in labels if part_of(e["id"]) == "development"], texts),
            "held_out": figures([e for e in labels if part_of(e["id"]) == "held_out"], texts),
            "all": figures(labels, texts),
        }
    }
    second, second_texts = load(SECOND)
    found["stats_labels_second"] = {
        "all": figures(second, second_texts),
        **{fold: figures(_in_fold(second, fold), second_texts) for fold in FOLDS},
    }
    third, third_texts = load(THIRD)
    found["stats_labels_third"] = {half: figures(_in_half(third, half), third_texts) for half in HALVES}
    fourth, fourth_texts = load(FOURTH)
    found["stats_labels_fourth"] = {
        half: figures(_in_half(fourth, half, fourth_half_of), fourth_texts) for half in HALVES
    }
    evidence = {**evidence_texts("train"), **evidence_texts("validation")}
    for path in (EFFECTS_DEVELOPMENT, EFFECTS_VALIDATION):
        found[path.stem] = figures(json.loads(path.read_text(encoding="utf-8")), evidence)
    return found


def _in_fold(labels: list[dict[str, Any]], fold: str) -> list[dict[str, Any]]:
    return [entry for entry in labels if source_of(entry["id"]) in FOLDS[fold]]


HALVES = ("development", "held_out")


def _in_half(
    labels: list[dict[str, Any]], half: str, which_half: Callable[[str], str] = half_of
) -> list[dict[str, Any]]:
    return [entry for entry in labels if which_half(entry["id"]) == half]


def halved_set(path: Path, which_half: Callable[[str], str], *, show_misses: bool, held_out: bool) -> None:
    """A halved round's (3 or 4) development half per source (its misses when asked); its held-out half only when
    asked."""
    labels, texts = load(path)
    development = _in_half(labels, "development", which_half)
    misses: list[str] = []
    print(line("development half", figures(development, texts, misses if show_misses else None)))
    for source in ("ei", "eiabs", "eift", "pubmedqa", "medevidence"):
        print(line(f"  {source}", figures([e for e in development if source_of(e["id"]) == source], texts)))
    if show_misses:
        print("\n".join(misses))
    if held_out:
        print(line("held-out half", figures(_in_half(labels, "held_out", which_half), texts)))


def second_set(misses_of: str | None) -> None:
    """Round 2's figures per fold and source, and the misses of the fold ``misses_of`` only."""
    labels, texts = load(SECOND)
    for fold, sources in FOLDS.items():
        misses: list[str] = []
        print(line(fold, figures(_in_fold(labels, fold), texts, misses if fold == misses_of else None)))
        for source in sources:
            print(line(f"  {source}", figures([e for e in labels if source_of(e["id"]) == source], texts)))
        if fold == misses_of:
            print("\n".join(misses))
    print(line("second set, all", figures(labels, texts)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="print each miss of the development part")
    parser.add_argument("--json", action="store_true", help="print every labelled set's figures as JSON")
    parser.add_argument("--second", action="store_true", help="round 2's set: figures per fold and source only")
    parser.add_argument("--misses-of", choices=sorted(FOLDS), help="with --second: print this fold's misses")
    parser.add_argument("--third", action="store_true", help="round 3's set: the development half per source")
    parser.add_argument("--fourth", action="store_true", help="round 4's set: the development half per source")
    parser.add_argument("--held-out", action="store_true", help="with --third/--fourth: the held-out half too")
    args = parser.parse_args()
    if args.fourth:
        halved_set(FOURTH, fourth_half_of, show_misses=args.misses, held_out=args.held_out)
        return
    if args.third:
        halved_set(THIRD, half_of, show_misses=args.misses, held_out=args.held_out)
        return
    if args.second:
        second_set(args.misses_of)
        return
    if args.json:
        print(json.dumps(every_figure(), indent=1))
        return
    labels, texts = load()
    for part in ("development", "held_out"):
        chosen = [entry for entry in labels if part_of(entry["id"]) == part]
        misses: list[str] = []
        print(line(part, figures(chosen, texts, misses if part == "development" else None)))
        for source in ("ei", "pubmedqa", "medevidence"):
            print(line(f"  {source}", figures([e for e in chosen if source_of(e["id"]) == source], texts)))
        if args.misses and part == "development":
            print("\n".join(misses))
    print(line("all", figures(labels, texts)))


if __name__ == "__main__":
    main()
