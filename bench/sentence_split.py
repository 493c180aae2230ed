"""The sentence splitters the code had, side by side on real biomedical text: where each one cuts wrongly and
where it misses an end.

    python bench/sentence_split.py [--data ../shared/data] [--fulltexts 200] [--skip 0] [--no-abstracts] [--no-pysbd]

Texts: every Evidence Inference abstract (``evidence-inference/abstracts``) and ``--fulltexts`` full texts
(``evidence-inference/fulltext``, sorted by name, after the first ``--skip``), each with its whitespace
collapsed (the splitters all see prose on one line; line breaks are a caller's business). The abbreviations
the splitter of ``text`` knows were chosen on the abstracts and the first 200 full texts;
``--skip 200 --fulltexts 700 --no-abstracts`` measures it on the 622 full texts set aside.
Per splitter it prints:

- ``abbrev``: cuts right after an abbreviation that never ends a sentence here ("et al.", "vs.", "e.g.", "i.e.",
  "Fig.", "approx.", "cf.", "ca.", "resp."): each a sentence cut in two.
- ``in_token``: cuts with no space at the cut, inside a token (a decimal "0.5", a "p=.03", "95% CI 0.5-0.9").
- ``missed``: ends it did not cut: ". " (or "!", "?") before a word that starts sentences in these texts ("The",
  "We", "In", "This", "These", "Patients", "There", "However", ...), not after one of those abbreviations.
- ``seconds``: time over all the texts.

pysbd (a maintained rule-based splitter, PyPI ``pysbd``) is measured too when it is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from deepcritical.text import collapse_whitespace, sentence_starts

Splitter = Callable[[str], list[int]]  # the offsets where a sentence after the first starts


def regex_splitter(pattern: str) -> Splitter:
    compiled = re.compile(pattern)
    return lambda text: [match.end() for match in compiled.finditer(text)]


# The splitters of the code before this consolidation, as they were written (by the module that had each).
OLD: dict[str, Splitter] = {
    "passages/documents": regex_splitter(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])"),
    "outcomes/grading": regex_splitter(r"[.!?]\s+(?=[A-Z(])"),
    "statistics": regex_splitter(r"(?<![vV]s)(?<!\b[a-z])\.\s+(?=[A-Z(\[])|\n+"),
    "informative": regex_splitter(r"(?<=[.!?])\s+"),
    "units": regex_splitter(r"(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bet al\.)(?<=[.!?])\s+(?=[A-Z0-9(\[])"),
}
# "ca." in lower case only: "CA." ends an address ("San Diego, CA. The ...").
ABBREVIATION = re.compile(r"(?:\b(?i:et al|vs|e\.g|i\.e|figs?|approx|cf|resp)|\bca)\.\s*$")
OPENERS = "The|We|In|This|These|Patients|There|However|It|All|Our|Both|After|At|No|Of|A|An|To|For|Data|Results|Overall"
LIKELY_END = re.compile(rf"[.!?]\s+(?=(?:{OPENERS})\b)")


def pysbd_splitter() -> Splitter | None:
    try:
        import pysbd  # type: ignore[import-untyped]
    except ImportError:
        return None
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(text: str) -> list[int]:
        return [span.start for span in segmenter.segment(text)[1:]]

    return split


def texts(data: Path, fulltexts: int, skip: int = 0, abstracts: bool = True) -> list[str]:
    folder = data / "evidence-inference"
    paths = sorted((folder / "abstracts").glob("PMC*.txt")) if abstracts else []
    paths += sorted((folder / "fulltext").glob("PMC*.txt"))[skip : skip + fulltexts]
    return [collapse_whitespace(path.read_text(encoding="utf-8", errors="replace")) for path in paths]


def measure(split: Splitter, corpus: list[str]) -> dict[str, float]:
    abbrev = in_token = missed = cuts = 0
    started = time.perf_counter()
    for text in corpus:
        starts = split(text)
        cuts += len(starts)
        at = set(starts)
        for start in starts:
            if ABBREVIATION.search(text[max(start - 12, 0) : start]):
                abbrev += 1
            elif 0 < start < len(text) and not text[start - 1].isspace() and not text[start].isspace():
                in_token += 1
        for end in LIKELY_END.finditer(text):
            if ABBREVIATION.search(text[max(end.start() - 11, 0) : end.start() + 1]):
                continue
            if not any(position in at for position in range(end.start() + 1, end.end() + 1)):
                missed += 1
    return {
        "cuts": cuts,
        "abbrev": abbrev,
        "in_token": in_token,
        "missed": missed,
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--fulltexts", type=int, default=200)
    parser.add_argument("--skip", type=int, default=0, help="full texts left out before the ones measured")
    parser.add_argument("--no-abstracts", action="store_true")
    parser.add_argument("--no-pysbd", action="store_true", help="pysbd takes minutes on the full texts")
    args = parser.parse_args()
    corpus = texts(args.data, args.fulltexts, args.skip, not args.no_abstracts)
    if not corpus:
        raise SystemExit(f"no Evidence Inference texts under {args.data}")
    print(f"{len(corpus)} texts, {sum(map(len, corpus)):,} characters")
    splitters: dict[str, Splitter] = {**OLD, "text.sentence_starts (now)": sentence_starts}
    if not args.no_pysbd and (sbd := pysbd_splitter()) is not None:
        splitters["pysbd 0.3.4"] = sbd
    print(f"{'splitter':28} {'cuts':>7} {'abbrev':>7} {'in_token':>8} {'missed':>7} {'seconds':>8}")
    for name, split in splitters.items():
        figures = measure(split, corpus)
        print(
            f"{name:28} {figures['cuts']:>7} {figures['abbrev']:>7} {figures['in_token']:>8} "
            f"{figures['missed']:>7} {figures['seconds']:>8}"
        )


if __name__ == "__main__":
    main()
