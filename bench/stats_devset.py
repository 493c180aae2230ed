r"""The statistics reader's second development set (issue 39): texts its rules were not written on, from
three sources, each text named by a pointer into ../shared/data (the texts never enter the repository).

    python bench/stats_devset.py [--out FILE]     # JSON Lines {"id", "text", "sha"} of the 204 texts
    python bench/stats_devset.py --second         # ... of the second draw's 104 texts (stats_labels_second.json)

- ``ei:PMCID:PromptID:UserID``: a doctor's evidence text of an Evidence Inference 2.0 TRAIN article
  (annotations.csv), none of those bench/effects_labels*.json were read from: 70 drawn uniformly and 40
  among those that state a confidence interval (a uniform sample holds few estimates);
- ``pubmedqa:PMID:INDEX``: the RESULTS context number INDEX of a PubMedQA PQA-L item (pqal_dev.json;
  the CONTEXTS only, never the answer fields), 40 drawn among those holding a number, and 20 more drawn
  after the other sources (the first draw held fewer than 400 results);
- ``medevidence:QID:PMID:INDEX``: paragraph INDEX (the abstract split at its line breaks) of a study's
  abstract in medevidence-dev/questions/QID/studies.jsonl, 40 drawn among paragraphs that state a
  p-value, an interval or a percentage (34 once the texts drawn twice, a study pooled for two questions, are
  kept once).

The second draw (round 2 of issue 39, ``draw_second``) takes texts only from articles no labelled set holds,
and adds ``eift:PMCID:LINE``: a line of a TRAIN article's full-text Results (Evidence Inference's extraction).

The third draw (round 3, ``draw_third``, ``--third``; bench/stats_labels_third.json) takes texts only from articles
neither earlier draw nor the first round's sets hold, from train and validation articles (never test), and adds
``eiabs:PMCID``: the results section of an article's abstract. ``half_of`` splits it by article into a development
half and a held-out half, before any of the reader's output on it was printed.

The fourth draw (round 4, ``draw_fourth``, ``--fourth``; bench/stats_labels_fourth.json) draws as the third from
articles no earlier set holds, halved at draw time by ``fourth_half_of``; labelled before the number tagger was trained.

The sample is drawn once with the seed below, before any label was read and before any rule changed;
bench/stats_labels.json holds the labels read by hand from it (and each text's sha256, so a changed text
is noticed). The conventions the labels follow are in phases/23_readers.md.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import sys
from pathlib import Path

from effects_devset import DATA as EI_DATA
from effects_devset import evidence_texts

SHARED = EI_DATA.parent
# The third draw reads validation articles too (never the test split, which the readers keep apart).
THIRD_SPLITS = ("train", "validation")
BENCH = Path(__file__).resolve().parent
SEED = 39
COUNTS = {"ei": 70, "ei_ci": 40, "pubmedqa": 40, "medevidence": 40, "pubmedqa_more": 20}
_MENTIONS_CI = re.compile(r"\bCI\b|confidence interval", re.IGNORECASE)
_STATISTIC = re.compile(r"\b[pP]\s*[<=>≤≥]|\bCI\b|confidence interval|\d\s?%")
_DIGIT = re.compile(r"\d")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pubmedqa_texts(shared: Path = SHARED) -> dict[str, str]:
    items = json.loads((shared / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    texts = {}
    for pmid, item in items.items():
        for index, (label, context) in enumerate(zip(item["LABELS"], item["CONTEXTS"], strict=True)):
            if label == "RESULTS":
                texts[f"pubmedqa:{pmid}:{index}"] = context
    return texts


def medevidence_texts(shared: Path = SHARED) -> dict[str, str]:
    texts = {}
    for folder in sorted((shared / "medevidence-dev" / "questions").iterdir()):
        for line in (folder / "studies.jsonl").read_text(encoding="utf-8").splitlines():
            study = json.loads(line)
            for index, paragraph in enumerate(study["text"].split("\n")):
                texts.setdefault(f"medevidence:{folder.name}:{study['_id']}:{index}", paragraph)
    return texts


def _articles(splits: tuple[str, ...], shared: Path = SHARED) -> list[str]:
    with (shared / "evidence-inference" / "splits.csv").open(encoding="utf-8", newline="") as handle:
        return sorted(row["PMCID"] for row in csv.DictReader(handle) if row["split"] in splits)


def results_paragraphs(shared: Path = SHARED, splits: tuple[str, ...] = ("train",)) -> dict[str, str]:
    """Each paragraph (line) of a TRAIN (or ``splits``') article's full-text Results in Evidence Inference, by
    ``eift:PMCID:LINE``: the lines after a ``BODY.`` heading naming results, up to the next heading naming a
    discussion or conclusion (the tables, flattened one cell a line by the authors' extraction, are lines too)."""
    data = shared / "evidence-inference"
    articles = _articles(splits, shared)
    texts: dict[str, str] = {}
    for pmcid in articles:
        path = data / "fulltext" / f"PMC{pmcid}.txt"
        if not path.is_file():
            continue
        in_results = False
        for index, line in enumerate(path.read_text(encoding="utf-8").split("\n")):
            if line.startswith("BODY.") and line.endswith(":"):
                heading = line.upper()
                in_results = "RESULT" in heading or (in_results and not _END_OF_RESULTS.search(heading))
            elif in_results and line.strip():
                texts[f"eift:{pmcid}:{index}"] = line
    return texts


def abstract_results(shared: Path = SHARED, splits: tuple[str, ...] = THIRD_SPLITS) -> dict[str, str]:
    """The results section of each Evidence Inference article's abstract (``eiabs:PMCID``): the text under an
    ``ABSTRACT.`` heading naming results or findings."""
    texts: dict[str, str] = {}
    for pmcid in _articles(splits, shared):
        path = shared / "evidence-inference" / "abstracts" / f"PMC{pmcid}.txt"
        if not path.is_file():
            continue
        sections = re.split(r"^(ABSTRACT\.[^\n]*:)\s*$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
        for heading, body in zip(sections[1::2], sections[2::2], strict=True):
            if re.search(r"RESULT|FINDING", heading) and body.strip():
                texts.setdefault(f"eiabs:{pmcid}", body.strip())
    return texts


def all_texts(*, full_text: bool = False, third: bool = False) -> dict[str, str]:
    """Every text a pointer of this set may name, by pointer (``full_text``: the Results paragraphs too;
    ``third``: the third draw's sources, validation articles and abstracts' results too)."""
    if third:
        ei = {f"ei:{key}": text for split in THIRD_SPLITS for key, text in evidence_texts(split).items()}
        extra = {**results_paragraphs(splits=THIRD_SPLITS), **abstract_results()}
        return {**ei, **pubmedqa_texts(), **medevidence_texts(), **extra}
    ei = {f"ei:{key}": text for key, text in evidence_texts("train").items()}
    return {**ei, **pubmedqa_texts(), **medevidence_texts(), **(results_paragraphs() if full_text else {})}


def draw(seed: int = SEED) -> dict[str, str]:
    rng = random.Random(seed)
    seen_before = set()
    for name in ("effects_labels.json", "effects_labels_validation.json"):
        seen_before |= {entry["id"] for entry in json.loads((BENCH / name).read_text(encoding="utf-8"))}
    ei = {f"ei:{key}": text for key, text in evidence_texts("train").items() if key not in seen_before}
    written_on = {text for key, text in evidence_texts("train").items() if key in seen_before}
    ei = {key: text for key, text in ei.items() if text not in written_on and _DIGIT.search(text)}
    chosen: dict[str, str] = {}
    uniform = rng.sample(sorted(ei), COUNTS["ei"])
    chosen.update((key, ei[key]) for key in uniform)
    with_ci = sorted(key for key, text in ei.items() if _MENTIONS_CI.search(text) and key not in chosen)
    chosen.update((key, ei[key]) for key in rng.sample(with_ci, COUNTS["ei_ci"]))
    pubmedqa = {key: text for key, text in pubmedqa_texts().items() if _DIGIT.search(text)}
    chosen.update((key, pubmedqa[key]) for key in rng.sample(sorted(pubmedqa), COUNTS["pubmedqa"]))
    medevidence = {key: text for key, text in medevidence_texts().items() if _STATISTIC.search(text)}
    chosen.update((key, medevidence[key]) for key in rng.sample(sorted(medevidence), COUNTS["medevidence"]))
    # Drawn last (the first draw held 384 results, under the 400 asked), so the draws above are unchanged.
    more = sorted(key for key in pubmedqa if key not in chosen)
    chosen.update((key, pubmedqa[key]) for key in rng.sample(more, COUNTS["pubmedqa_more"]))
    # One study's abstract stands under each question that pooled it: a text drawn twice is kept once.
    kept: dict[str, str] = {}
    for key, text in chosen.items():
        if text not in kept.values():
            kept[key] = text
    return kept


# The second draw (issue 39, round 2): texts of articles in no labelled set, labelled before any rule changed.
SECOND_COUNTS = {"ei": 20, "ei_groups": 15, "eift": 10, "pubmedqa": 15, "medevidence": 12, "eift_paragraphs": 10}
SECOND_COUNTS |= {"ei_groups_more": 15, "medevidence_more": 8}
SECOND_SEED = 3902
_END_OF_RESULTS = re.compile(r"DISCUSSION|CONCLUSION|LIMITATION|ACKNOWLEDG|REFERENCE")
# Groups' values set side by side (the reader's weakest kind): "vs", "versus", "respectively", "compared with".
_SIDE_BY_SIDE = re.compile(r"\b(?:vs\.?|versus|respectively|compared (?:with|to))\b", re.IGNORECASE)
_PARAGRAPH = re.compile(r"^(?=.{150,}).*(?:\b[pP]\s*[<=>≤≥]|\bCI\b|confidence interval|\d\s?%)", re.DOTALL)
_SHORT_ENOUGH = 1500  # a paragraph longer than this is not drawn (read by hand, one at a time)


def article_of(text_id: str) -> str:
    """The article a text comes from (an Evidence Inference PMCID, a PubMedQA or MedEvidence PMID)."""
    parts = text_id.split(":")
    source = "ei" if parts[0] in ("eift", "eiabs") else parts[0]
    return f"{source}:{parts[2] if parts[0] == 'medevidence' else parts[1]}"


class _Draw:
    """A seeded draw of texts by source, from the articles no labelled set of ``label_files`` holds; each text
    at most once, and one text drawn twice under two ids kept under its first."""

    def __init__(self, seed: int, label_files: tuple[str, ...], texts: dict[str, str], longest: int) -> None:
        self.rng = random.Random(seed)
        labelled: set[str] = set()
        for name in ("effects_labels.json", "effects_labels_validation.json"):
            entries = json.loads((BENCH / name).read_text("utf-8"))
            labelled |= {f"ei:{entry['id'].split(':')[0]}" for entry in entries}
        for name in label_files:
            labelled |= {article_of(entry["id"]) for entry in json.loads((BENCH / name).read_text("utf-8"))}
        self.texts = {
            key: text
            for key, text in texts.items()
            if article_of(key) not in labelled and _DIGIT.search(text) and len(text) <= longest
        }
        self.by_source: dict[str, list[str]] = {}
        for key in sorted(self.texts):
            self.by_source.setdefault(source_of(key), []).append(key)
        self.chosen: dict[str, str] = {}

    def take(self, source: str, count: int, keep: re.Pattern[str] | None = None) -> None:
        pool = [
            k for k in self.by_source[source] if k not in self.chosen and (keep is None or keep.search(self.texts[k]))
        ]
        self.chosen.update((key, self.texts[key]) for key in self.rng.sample(pool, count))

    def kept(self) -> dict[str, str]:
        kept: dict[str, str] = {}
        for key, text in self.chosen.items():
            if text not in kept.values():
                kept[key] = text
        return kept


def draw_second(seed: int = SECOND_SEED) -> dict[str, str]:
    """Texts from articles none of the labelled sets holds (bench/effects_labels*.json, stats_labels.json)."""
    drawn = _Draw(seed, ("stats_labels.json",), all_texts(full_text=True), _SHORT_ENOUGH)
    take = drawn.take
    take("ei", SECOND_COUNTS["ei"])
    take("ei", SECOND_COUNTS["ei_groups"], _SIDE_BY_SIDE)
    take("eift", SECOND_COUNTS["eift"], _STATISTIC)
    take("pubmedqa", SECOND_COUNTS["pubmedqa"])
    take("medevidence", SECOND_COUNTS["medevidence"], _STATISTIC)
    # The full text's lines drawn above were mostly a table's cells ("19 (59.4%)", labelled: no result); drawn
    # last, so the draws above stand as first drawn and read, paragraphs of prose from the Results too.
    take("eift", SECOND_COUNTS["eift_paragraphs"], _PARAGRAPH)
    # Then more (the texts above held 133 results, under the 150 asked), drawn last for the same reason.
    take("ei", SECOND_COUNTS["ei_groups_more"], _SIDE_BY_SIDE)
    take("medevidence", SECOND_COUNTS["medevidence_more"], _STATISTIC)
    return drawn.kept()


def source_of(text_id: str) -> str:
    return text_id.split(":", 1)[0]


# The third draw (issue 39, round 3): texts of articles in no earlier labelled set, labelled before any rule
# changed, split into a development half and a held-out half by article within each source (``half_of``).
THIRD_SEED = 3903
THIRD_COUNTS = {"ei": 25, "ei_ci": 20, "eiabs": 10, "eift": 10, "pubmedqa": 15, "medevidence": 15}
_THIRD_LONGEST = 1200  # a text longer than this is not drawn (read by hand, one at a time)


def half_of(text_id: str) -> str:
    """The third set's half of a text: its article hashed, so one article's texts fall in one half."""
    digest = hashlib.sha256(f"third:{article_of(text_id)}".encode()).digest()
    return "held_out" if digest[0] % 2 else "development"


def draw_third(seed: int = THIRD_SEED) -> dict[str, str]:
    """Texts from articles no earlier labelled set holds (effects_labels*.json, stats_labels*.json), from
    Evidence Inference train and validation articles (evidence, abstracts' results, full-text Results),
    PubMedQA RESULTS contexts and MedEvidence paragraphs."""
    return _draw_as_third(seed, ("stats_labels.json", "stats_labels_second.json"))


def _draw_as_third(seed: int, label_files: tuple[str, ...]) -> dict[str, str]:
    """The third draw's sources, counts and length, from articles none of ``label_files`` (nor round 1's) holds."""
    drawn = _Draw(seed, label_files, all_texts(third=True), _THIRD_LONGEST)
    take = drawn.take
    take("ei", THIRD_COUNTS["ei"])
    take("ei", THIRD_COUNTS["ei_ci"], _MENTIONS_CI)
    take("eiabs", THIRD_COUNTS["eiabs"], _STATISTIC)
    take("eift", THIRD_COUNTS["eift"], _PARAGRAPH)
    take("pubmedqa", THIRD_COUNTS["pubmedqa"])
    take("medevidence", THIRD_COUNTS["medevidence"], _STATISTIC)
    return drawn.kept()


# The fourth draw (issue 39, round 4): texts of articles in no earlier labelled set, labelled before any rule changed
# and before a tagger was trained, halved by article at draw time (``fourth_half_of``); the held-out half is read once.
FOURTH_SEED = 3904


def fourth_half_of(text_id: str) -> str:
    """The fourth set's half of a text: its article hashed, so one article's texts fall in one half."""
    digest = hashlib.sha256(f"fourth:{article_of(text_id)}".encode()).digest()
    return "held_out" if digest[0] % 2 else "development"


def draw_fourth(seed: int = FOURTH_SEED) -> dict[str, str]:
    """As ``draw_third`` (same sources, counts and length), from articles none of the three earlier sets holds."""
    return _draw_as_third(seed, ("stats_labels.json", "stats_labels_second.json", "stats_labels_third.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--second", action="store_true", help="the second draw (stats_labels_second.json)")
    parser.add_argument("--third", action="store_true", help="the third draw (stats_labels_third.json)")
    parser.add_argument("--fourth", action="store_true", help="the fourth draw (stats_labels_fourth.json)")
    args = parser.parse_args()
    if args.fourth:
        drawn = draw_fourth()
        halves = {key: fourth_half_of(key) for key in drawn}
    else:
        drawn = draw_third() if args.third else draw_second() if args.second else draw()
        halves = {}
    lines = "".join(
        json.dumps({"id": key, "text": text, "sha": sha(text), **({"half": halves[key]} if halves else {})}) + "\n"
        for key, text in drawn.items()
    )
    if args.out:
        args.out.write_text(lines, encoding="utf-8")
    else:
        sys.stdout.write(lines)


if __name__ == "__main__":
    main()
