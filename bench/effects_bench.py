r"""The statistics reader against hand labels, and its speed (issue 25, item 1).

    python bench/effects_bench.py [--labels LABELS.json ...]

Quality, on the development samples (bench/effects_devset.py, train articles: 120 drawn uniformly, 40
that state an interval; the reader was tuned on them) and on 50 held-out validation texts labelled after
it was frozen. The labels were read by hand from each text (ids, offsets and values only): precision,
recall and F1 of

- p-values: each stated p-value (comparator and number), wherever the reader attaches it;
- estimates: value and interval of each effect size stated with a confidence interval;
- group values: each comparison's values per group (the leading number of each group, in order);
- significance: of the labelled results the reader found (matched by estimate, groups or p-value), the
  share whose significance (true/false) it reads as the label does.

A check on the validation articles, which no label was read from: the doctors' own answer per text
(significant difference or not) against the reader, where the reader finds results that all agree.

Speed: 150 texts read (target under 5 s), and the first call (regexes compiled lazily) apart.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from deepcritical.reading.patterns import normalised
from deepcritical.reading.statistics import read_effects
from effects_devset import DATA, evidence_texts, sample

LABELS = Path(__file__).resolve().parent / "effects_labels.json"
# 50 validation texts labelled after the reader was frozen: the held-out figure (no rule was written for them).
HELD_OUT = Path(__file__).resolve().parent / "effects_labels_validation.json"
_FIRST_NUMBER = re.compile(r"[-+]?\s?(?:\d+(?:\.\d+)?|\.\d+)")

Result = dict[str, Any]


def p_key(p: str) -> tuple[str, float] | str:
    if p == "NS":
        return p
    comparator = {"≤": "<", "≥": ">"}.get(p[0], p[0])
    return comparator, round(float(p.lstrip("<>=≤≥")), 6)


def groups_key(groups: Iterable[str]) -> tuple[float, ...]:
    numbers = []
    for group in groups:
        match = _FIRST_NUMBER.search(normalised(group))
        numbers.append(abs(float(match.group(0).replace(" ", ""))) if match else float("nan"))
    return tuple(numbers)


def keys(result: Result) -> dict[str, Any]:
    """The keys a result is matched by: its p-value, its estimate (value and interval), its groups."""
    found: dict[str, Any] = {}
    if result.get("p"):
        found["p"] = p_key(result["p"])
    if result.get("ci") and result["measure"] != "group_values":
        found["estimate"] = tuple(round(x, 6) for x in (result["value"], *result["ci"]))
    if result["measure"] == "group_values" and len(result.get("groups", ())) >= 2:
        found["groups"] = groups_key(result["groups"])
    return found


def as_result(effect: Any) -> Result:
    result: Result = {"measure": effect.measure, "value": effect.value, "p": effect.p, "groups": list(effect.groups)}
    if effect.ci_low is not None and effect.ci_high is not None:
        result["ci"] = [effect.ci_low, effect.ci_high]
    result["significant"] = effect.significant
    return result


def prf(gold: Counter[Any], found: Counter[Any]) -> tuple[float, float, float, int, int]:
    hits = sum((gold & found).values())
    precision = hits / sum(found.values()) if found else 1.0
    recall = hits / sum(gold.values()) if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, sum(gold.values()), sum(found.values())


def quality(labels: list[dict[str, Any]], texts: dict[str, str]) -> None:
    gold: dict[str, Counter[Any]] = {"p": Counter(), "estimate": Counter(), "groups": Counter()}
    found: dict[str, Counter[Any]] = {"p": Counter(), "estimate": Counter(), "groups": Counter()}
    right = judged = 0
    misses: list[str] = []
    for entry in labels:
        text_id = entry["id"]
        predicted = [as_result(e) for e in read_effects(texts[text_id])]
        for kind in gold:
            gold[kind].update((text_id, k[kind]) for k in map(keys, entry["results"]) if kind in k)
            found[kind].update((text_id, k[kind]) for k in map(keys, predicted) if kind in k)
        for result in entry["results"]:
            if result["significant"] is None:
                continue
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
            if match is not None:
                judged += 1
                right += match["significant"] == result["significant"]
                if match["significant"] != result["significant"]:
                    misses.append(f"{text_id}: read {match['significant']}, labelled {result['significant']}")
    print(f"labelled texts: {len(labels)}, results: {sum(len(e['results']) for e in labels)}")
    for kind, target in (("p", 0.90), ("estimate", 0.85), ("groups", 0.75)):
        precision, recall, f1, n_gold, n_found = prf(gold[kind], found[kind])
        print(
            f"{kind:>9}: P {precision:.3f}  R {recall:.3f}  F1 {f1:.3f}  "
            f"(labelled {n_gold}, read {n_found}; target F1 >= {target:.2f})"
        )
    share = right / judged if judged else 0.0
    print(f"significance right: {right}/{judged} = {share:.1%} (target >= 90 %)")
    for miss in misses:
        print("   ", miss)


def validation_check() -> None:
    """Doctors' answer (significant or not) per validation text against the reader's, where it reads any."""
    import csv

    labels: dict[str, str] = {}
    with (DATA / "annotations.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            labels[f"{row['PMCID']}:{row['PromptID']}:{row['UserID']}"] = row["Label"]
    texts = evidence_texts("validation")
    agree = read = 0
    for text_id, text in texts.items():
        verdicts = {e.significant for e in read_effects(text) if e.significant is not None and not e.within_group}
        if len(verdicts) != 1:
            continue
        read += 1
        agree += verdicts.pop() == (labels[text_id] != "no significant difference")
    print(
        f"validation check: {len(texts)} texts; the reader reads one verdict in {read}; "
        f"it agrees with the doctors' answer in {agree}/{read} = {agree / max(read, 1):.1%}"
    )


def speed() -> None:
    code = (
        "import time; t=time.perf_counter(); import deepcritical.reading.statistics; "
        "print((time.perf_counter()-t)*1000)"
    )
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    print(f"import deepcritical.reading.statistics: {float(cold):.0f} ms (a fresh interpreter)")
    texts = list(sample("train", 150, seed=25).values())
    started = time.perf_counter()
    read_effects(texts[0])
    first = time.perf_counter() - started
    started = time.perf_counter()
    count = sum(len(read_effects(text)) for text in texts)
    elapsed = time.perf_counter() - started
    print(f"first call (compiles the patterns): {first * 1000:.0f} ms")
    print(f"150 texts: {elapsed:.3f} s ({count} results; target < 5 s)")
    # Untrusted text of any length: the reader's time grows with the text's length, not its square.
    adversarial = {
        "one estimate repeated": "HR 0.77 (95% CI 0.72-0.82); p<0.001. " * 3000,
        "5,000 values joined by vs, no full stop": " vs ".join("1.0 mm" for _ in range(5000)),
        "10,000 counts in one run": "12 (3%) " * 10000,
    }
    for name, text in adversarial.items():
        started = time.perf_counter()
        read_effects(text)
        print(f"{name} ({len(text):,} chars): {time.perf_counter() - started:.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "texts.jsonl", Path(folder) / "effects.jsonl"
        source.write_text(
            "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8"
        )
        command = [sys.executable, "-m", "deepcritical", "extract", str(source), "--out", str(out)]
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True, env={**os.environ, "DEEPCRITICAL_HOME": folder})
        print(f"deepcritical extract on the 150 texts, the whole command: {time.perf_counter() - started:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, nargs="*", default=[LABELS, HELD_OUT])
    args = parser.parse_args()
    texts = {**evidence_texts("train"), **evidence_texts("validation")}
    speed()
    for path in args.labels:
        print(f"\n{path.name}:")
        quality(json.loads(path.read_text(encoding="utf-8")), texts)
    print()
    validation_check()


if __name__ == "__main__":
    main()
