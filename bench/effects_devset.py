r"""The statistics reader's development texts: the doctors' evidence texts of Evidence Inference 2.0
(``../shared/data/evidence-inference/annotations.csv``, column ``Annotations``), sampled from the
authors' TRAIN articles only (``splits.csv``); the validation articles stay aside as a check.

    python bench/effects_devset.py [--split train|validation] [--n 120] [--seed 16] [--out FILE]
    python bench/effects_devset.py --with-ci --n 40 --seed 1625    # the estimates' own sample

Writes JSON Lines ``{"id", "text"}`` (the input of ``deepcritical extract``) to FILE or stdout. The
texts stay in ../shared/data: the repository keeps only the labels read by hand from them
(bench/effects_labels.json: ids, offsets and values). An id is ``PMCID:PromptID:UserID``.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "evidence-inference"
# The seed of the labelled development sample (bench/effects_labels.json was read from this sample).
SEED = 16
# The seed of the second labelled sample, texts that state a confidence interval.
CI_SEED = 1625
_MENTIONS_CI = re.compile(r"\bCI\b|confidence interval", re.IGNORECASE)


def evidence_texts(split: str, data: Path = DATA) -> dict[str, str]:
    """Every distinct evidence text of ``split``'s articles, by id, in the file's order."""
    if not (data / "annotations.csv").is_file():
        raise SystemExit(f"effects_devset: {data} is absent (the shared reference data sits beside the project)")
    with (data / "splits.csv").open(encoding="utf-8", newline="") as handle:
        articles = {row["PMCID"] for row in csv.DictReader(handle) if row["split"] == split}
    texts: dict[str, str] = {}
    seen: set[str] = set()
    csv.field_size_limit(sys.maxsize)
    with (data / "annotations.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            text = row["Annotations"]
            if row["PMCID"] not in articles or not text.strip() or text in seen:
                continue
            seen.add(text)
            texts[f"{row['PMCID']}:{row['PromptID']}:{row['UserID']}"] = text
    return texts


def sample(
    split: str = "train", n: int = 120, seed: int = SEED, data: Path = DATA, *, with_ci: bool = False
) -> dict[str, str]:
    """``n`` texts of ``split`` drawn at random; ``with_ci``: only texts that state a confidence interval
    (a uniform sample holds few: the estimates' own sample)."""
    texts = evidence_texts(split, data)
    if with_ci:
        texts = {key: text for key, text in texts.items() if _MENTIONS_CI.search(text)}
    chosen = random.Random(seed).sample(sorted(texts), min(n, len(texts)))
    return {key: texts[key] for key in chosen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("train", "validation"), default="train")
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--with-ci", action="store_true", help="only texts that state a confidence interval")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    chosen = sample(args.split, args.n, args.seed, with_ci=args.with_ci)
    lines = [json.dumps({"id": key, "text": text}) for key, text in chosen.items()]
    output = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(output, encoding="utf-8")
    else:
        sys.stdout.write(output)


if __name__ == "__main__":
    main()
