r"""A clinician's trials read through the whole research run, against doctors' readings (Evidence Inference 2.0).

    nice -n 10 .venv/bin/python bench/library_trials.py [--limit 60] [--data ../shared/data/evidence-inference]

``deepcritical eval evidence-inference`` measures the result reader alone: it is handed the whole article and the
prompt's comparison. A user never runs that. They put their trial papers in a library and ask a question; what
the report says of each trial comes out of the whole run (the library's passages and sections, the search and
selection of passages, the question's frame and comparison, ``study_reading``, the counted table). This bench
measures that path on the **validation** articles only (the reader was trained on the train articles):

1. every validation article becomes a JATS file (PubMed Central's own format, which ``library add`` reads with its
   sections): its title, its abstract with the abstract's labelled sections, its body's sections (the text's
   "BODY.X:" labels; the usual top-level sections, Introduction, Methods, Results, Discussion..., open a section,
   any other label is a subsection of the one before, as a PMC article nests them); a block of table cells (one
   per line) becomes a JATS table, its rows found as ``eval evidence-inference`` finds them (``reading.units``),
   as a PMC article gives its tables. The full text when the data has it, else the abstract. No PMCID is written
   in the file, so the document is known by its path and a run fetches nothing;
2. ``deepcritical library add`` (the CLI itself, in a subprocess) puts them into one collection of a temporary
   home (never the user's, never the repository);
3. each prompt becomes the question "Does <intervention> change <outcome> compared with <comparator>?". "Change"
   is the neutral verb: "reduce" or "increase" would tell the run which way is favourable and half the time
   presume the wrong way; "change" leaves the direction to what the trial states (the doctors' label is a
   direction, not a judgement of benefit);
4. the real run (``run_to_folder`` with a ``RunRequest``: ``--no-llm``, ``--sources library``, the collection, no
   recall, the default iterations: what ``deepcritical research`` runs), in-process with the library indexed
   once, as ``deepcritical eval`` runs its questions;
5. the run's counted set (the one the report's table, brief and verdict read: captured where the run builds it)
   gives the row of THAT article: whether a passage of it was collected, whether it was counted (on topic, in the
   table), its direction (favourable / unfavourable / no difference / no clear result), direct or indirect and
   why, and the reading behind it. The direction is mapped back to the doctors' labels through the reading it
   came from: null is "no significant difference"; favourable or unfavourable is the reader's significant
   increase or decrease on that row (the table's favourable follows the question's and sentence's polarity, which
   ``change`` leaves to the outcome; the increase or decrease under it is what the doctors labelled);
6. the same prompts read by the reader alone (``eval evidence-inference``'s own ``predict``), so the loss through
   the run is visible prompt by prompt.

Doctors' labels are read only to score, after every run. Prints the figures; ``--out`` keeps one JSON line per
prompt (the row, the sentence relied on, the reader-alone prediction) for finding why a reading differs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import httpx2

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.topic import _names, _names_outcome, topic_of
from deepcritical.config import Settings, load_settings
from deepcritical.evaluation import evidence_inference as eval_inference
from deepcritical.evaluation.predictions import label_f1, macro_average
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.memory import MemoryStore
from deepcritical.logs import configure_logging
from deepcritical.reading.results import LABEL_TEXT
from deepcritical.reading.units import split_units
from deepcritical.run import outcome as outcome_module
from deepcritical.run import setup
from deepcritical.run.execute import RunSource, run_to_folder
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.request import RunRequest
from deepcritical.sources.factory import build_sources
from deepcritical.sources.library import LibraryTool

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "evidence-inference"
COLLECTION = "trials"
LABELS = tuple(LABEL_TEXT.values())
_LABEL_LINE = re.compile(r"^(ABSTRACT|BODY)\.(.+?):\s*$")
_TITLE_LINE = re.compile(r"^TITLE:\s*$")
# Body labels that open a section of their own; any other label is a subsection of the section before it (the
# text flattens a PMC article's nesting: "BODY.RESULTS:", then "BODY.EFFICACY:" inside it).
_TOP_LEVEL = re.compile(
    r"^(?:\d+\.?\s+)?(?:INTRODUCTION|BACKGROUND|(?:(?:MATERIALS?|PATIENTS|SUBJECTS|PARTICIPANTS)\s+AND\s+)?METHODS?"
    r"|METHODOLOGY|RESULTS?(?:\s+AND\s+DISCUSSION)?|DISCUSSION|CONCLUSIONS?|LIMITATIONS|COMPETING INTERESTS"
    r"|ABBREVIATIONS|ACKNOWLEDG\w*|AUTHORS'? CONTRIBUTIONS|SUPPORTING INFORMATION|FUNDING|TRIAL REGISTRATION"
    r"|PRE-PUBLICATION HISTORY|ELECTRONIC SUPPLEMENTARY MATERIAL|SUPPLEMENTARY MATERIAL)$"
)
# "2. DISCUSSION" opens a section, "2.1 LENALIDOMIDE IN MYELOMA" is a subsection of it.
_NUMBERED_SECTION = re.compile(r"^\d+\.\s")
# A line this short, not ending a sentence, is a table's cell; a block of at least this many lines, most of them
# cells, is a table (as ``reading.units`` reads the authors' extraction).
CELL_CHARS = 60
TABLE_LINES = 3
QUESTION = "Does {intervention} change {outcome} compared with {comparator}?"


def question_of(prompt: eval_inference.Prompt) -> str:
    def clean(text: str) -> str:
        return " ".join(text.split()).rstrip(" .?")

    return QUESTION.format(
        intervention=clean(prompt.intervention), outcome=clean(prompt.outcome), comparator=clean(prompt.comparator)
    )


# --- The articles as PMC's JATS ---


def _title_case(label: str) -> str:
    return label.strip().capitalize()


def _blocks(lines: Sequence[str]) -> list[list[str]]:
    """A section's blocks of lines, at blank lines."""
    blocks, current = [], []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            blocks.append(current)
            current = []
    return blocks


def _is_table(block: Sequence[str]) -> bool:
    """A block of a table's cells, one per line, as the authors' extraction writes a table."""
    cells = [line for line in block if len(line) < CELL_CHARS and not line.endswith((".", "?", "!"))]
    return len(block) >= TABLE_LINES and len(cells) >= 0.6 * len(block)


def _xml(lines: Sequence[str]) -> str:
    """A section's paragraphs as JATS: prose as ``<p>``; a table's cells as a ``<table-wrap>`` of rows, the rows
    found as ``eval evidence-inference`` finds them in the same text (``reading.units``), as a PMC article gives
    its tables (a row per ``<tr>``)."""
    out = []
    for block in _blocks(lines):
        if not _is_table(block):
            out.append(f"<p>{escape(' '.join(block))}</p>")
            continue
        rows: list[str] = []
        for unit in split_units("\n".join(block)):
            if " | " in unit.text:
                rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in unit.text.split(" | ")) + "</tr>")
                continue
            if rows:
                out.append(f"<table-wrap><table><tbody>{''.join(rows)}</tbody></table></table-wrap>")
                rows = []
            out.append(f"<p>{escape(unit.text)}</p>")
        if rows:
            out.append(f"<table-wrap><table><tbody>{''.join(rows)}</tbody></table></table-wrap>")
    return "".join(out)


def to_jats(text: str) -> str:
    """An Evidence Inference article text as a minimal JATS article: title, abstract sections, body sections."""
    title, abstract, body = "", [], []  # abstract: [(label, lines)]; body: [(label, [(sub, lines)])]
    lines = text.replace("\r\n", "\n").split("\n")
    target: list[str] | None = None
    in_title = False
    for line in lines:
        if _TITLE_LINE.match(line):
            in_title, target = True, None
            continue
        found = _LABEL_LINE.match(line)
        if found:
            in_title = False
            part, label = found.group(1), found.group(2).strip()
            if part == "ABSTRACT":
                abstract.append((label, []))
                target = abstract[-1][1]
            elif _TOP_LEVEL.match(label.upper()) or _NUMBERED_SECTION.match(label) or not body:
                body.append((label, [("", [])]))
                target = body[-1][1][-1][1]
            else:
                body[-1][1].append((label, []))
                target = body[-1][1][-1][1]
            continue
        if in_title and line.strip() and not title:
            title = line.strip()
        elif target is not None:
            target.append(line)

    def paragraphs(chunk: Sequence[str]) -> str:
        return _xml(chunk)

    abstract_xml = "".join(
        f"<sec><title>{escape(_title_case(label))}</title>{paragraphs(chunk)}</sec>" for label, chunk in abstract
    )
    body_xml = ""
    for label, parts in body:
        inner = ""
        for sub, chunk in parts:
            inner += (
                f"<sec><title>{escape(_title_case(sub))}</title>{paragraphs(chunk)}</sec>" if sub else paragraphs(chunk)
            )
        body_xml += f"<sec><title>{escape(_title_case(label))}</title>{inner}</sec>"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<article article-type="research-article"><front><article-meta>'
        f"<title-group><article-title>{escape(title)}</article-title></title-group>"
        f"<abstract>{abstract_xml}</abstract></article-meta></front><body>{body_xml}</body></article>\n"
    )


def write_articles(data: Path, pmcids: Sequence[str], folder: Path) -> dict[str, str]:
    """One JATS file per article (full text, else abstract); its kind by PMCID."""
    folder.mkdir(parents=True, exist_ok=True)
    kinds = {}
    for pmcid in pmcids:
        for kind in ("fulltext", "abstracts"):
            path = data / kind / f"PMC{pmcid}.txt"
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                (folder / f"PMC{pmcid}.nxml").write_text(to_jats(text), encoding="utf-8")
                kinds[pmcid] = kind.rstrip("s")
                break
    return kinds


def library_add(home: Path, folder: Path) -> dict[str, str]:
    """``deepcritical library add FOLDER`` in a subprocess (the user's command); the documents' ids by PMCID."""
    env = {**os.environ, "DEEPCRITICAL_HOME": str(home)}
    cli = [sys.executable, "-m", "deepcritical"]
    subprocess.run(
        [*cli, "library", "add", str(folder), "--collection", COLLECTION], env=env, check=True, capture_output=True
    )
    listed = subprocess.run(
        [*cli, "library", "documents", "--collection", COLLECTION, "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    ids = {}
    for row in json.loads(listed.stdout)["documents"]:
        name = Path(str(row.get("source_path") or row.get("path") or "")).stem
        if name.startswith("PMC"):
            ids[name[3:]] = str(row["id"])
    return ids


# --- The runs ---


def capture_counted() -> list[Strength]:
    """The counted sets the run builds (``assemble_outcome``'s one ``counted_items``), captured as built."""
    captured: list[Strength] = []
    original = outcome_module.counted_items

    def counted_items(question: str, evidence: Any, pool: Sequence[str]) -> Strength:
        strength = original(question, evidence, pool)
        captured.append(strength)
        return strength

    outcome_module.counted_items = counted_items  # type: ignore[assignment]
    return captured


def row_of(question: str, strength: Strength, document_id: str, collected: set[str]) -> dict[str, Any]:
    """The article's place in the run: collected, counted, its direction and the reading behind it."""
    views = [view for view in strength.views.values() if (view.document or view.id) == document_id]
    row: dict[str, Any] = {"collected": document_id in collected, "counted": False, "label": None}
    placed = [v.id for v in views if v.id not in strength.same_study]
    row["placed"] = placed
    if off := [i for i in placed if i in strength.off_topic]:
        row["off_topic"] = True
        row["off_topic_why"] = why_off_topic(question, strength.views[off[0]])
    counted = [i for i in placed if i in strength.counted]
    if not counted:
        return row
    item = strength.views[counted[0]]
    reading = StudyReader(question).read(item)
    direction = strength.directions.get(item.id)
    row |= {
        "counted": True,
        "item": item.id,
        "section": item.section,
        "direction": direction,
        "direct": reading.direct,
        "indirect": strength.indirect.get(item.id),
        "reader_label": reading.reading.label,
        "sentence": reading.reading.evidence[0].text[:400] if reading.reading.evidence else None,
        "other_outcome": reading.other_outcome,
        # What the row says in the doctors' terms: a null row is "no significant difference"; a favourable or
        # unfavourable row is the significant increase or decrease it was read from.
        "label": None
        if direction is None
        else LABEL_TEXT["no_difference"]
        if direction == "null"
        else LABEL_TEXT[reading.reading.label or "no_difference"],
    }
    return row


def why_off_topic(question: str, view: EvidenceView) -> dict[str, Any]:
    """Which of the topic's parts the passage placed for the study does not name (for finding why)."""
    topic = topic_of(question)
    haystack = f"{view.title} {view.text}".lower()
    return {
        "section": view.section,
        "intervention": list(topic.intervention),
        "missing": [w for w in topic.intervention if not _names([w], haystack, view.mesh)],
        "names_outcome": _names_outcome(view, topic),
        "title": view.title[:120],
    }


async def run_all(
    prompts: Sequence[eval_inference.Prompt], ids: dict[str, str], home: Path, out: Path
) -> list[dict[str, Any]]:
    base = load_settings(home=home).with_values(retention=None, demo_mode=False, demo_sources=False)
    settings = RunRequest(question="", sources=["library"], collection=COLLECTION, recall=False, no_llm=True).settings(
        base
    )
    embeddings = EmbeddingService.for_settings(settings)
    library = LibraryTool(settings, embeddings=embeddings)
    await library.index()
    captured = capture_counted()
    rows = []
    for number, prompt in enumerate(prompts, 1):
        question = question_of(prompt)
        request = RunRequest(question=question, sources=["library"], collection=COLLECTION, recall=False, no_llm=True)
        store = MemoryStore(embeddings, dedup_threshold=settings.dedup_threshold)

        def in_memory(settings: Settings, client: httpx2.AsyncClient, store: MemoryStore = store) -> RunSource:
            handler = build_sources(settings, client, library=library).handler
            return Orchestrator(setup.assemble(settings, client, handler=handler, store=store))

        began = time.perf_counter()
        captured.clear()
        try:
            finished = await run_to_folder(
                question, settings, folder=out / "runs" / prompt.id, request=request, run_source=in_memory
            )
        finally:
            await store.close()
        outcome = finished.outcome
        collected = {item.passage.document_id for item in outcome.evidence if item.passage}
        document = ids.get(prompt.pmcid, "")
        row = row_of(question, captured[-1], document, collected) if captured else {"collected": False}
        sections = [
            item.passage.section for item in outcome.evidence if item.passage and item.passage.document_id == document
        ]
        row |= {
            "passages_collected": len(sections),
            "sections_collected": sections,
            "passages_counted_set": sum(
                (view.document or view.id) == document for view in (captured[-1].views.values() if captured else ())
            ),
            "id": prompt.id,
            "pmcid": prompt.pmcid,
            "question": question,
            "verdict": outcome.verdict.label if outcome.verdict else None,
            "documents_collected": len(collected),
            "degraded": outcome.degraded,
            "seconds": round(time.perf_counter() - began, 2),
        }
        rows.append(row)
        print(f"[{number}/{len(prompts)}] {prompt.id} {row.get('direction')!s:>13} {row['seconds']:.1f}s", flush=True)
    return rows


def reader_alone(prompts: Sequence[eval_inference.Prompt], data: Path, out: Path) -> dict[str, dict[str, Any]]:
    """``eval evidence-inference``'s predictions for the same prompts (the linear reader, whole article)."""
    folder = out / "reader-alone"
    eval_inference.predict(list(prompts), data, folder)
    lines = [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return {str(line["id"]): line for line in lines}


# --- Scoring: the doctors' labels, read after every run ---


def scores(gold: Sequence[str], predicted: Sequence[str | None]) -> tuple[float, float | None]:
    """Accuracy and macro-F1 over the three labels; a prompt without a reading counts as wrong."""
    shown = [p or "none" for p in predicted]
    accuracy = sum(g == p for g, p in zip(gold, shown, strict=True)) / len(gold)
    return accuracy, macro_average(label_f1(list(gold), shown, label) for label in LABELS)


def report(rows: Sequence[dict[str, Any]], alone: dict[str, dict[str, Any]], labels: dict[str, str]) -> None:
    scored = [row for row in rows if row["id"] in labels]
    gold = [labels[row["id"]] for row in scored]
    n = len(scored)

    def share(count: int, of: int = n) -> str:
        return f"{count}/{of} ({count / of:.1%})" if of else "0/0"

    print(f"\nprompts scored: {n} (validation articles only)")
    print(f"article collected by the run:        {share(sum(r['collected'] for r in scored))}")
    print(f"article counted in the study table:  {share(sum(r['counted'] for r in scored))}")
    print(f"  with a reading (not 'no clear'):   {share(sum(r['label'] is not None for r in scored))}")
    print(f"  read as direct:                    {share(sum(bool(r.get('direct')) for r in scored))}")
    print(f"  marked indirect:                   {share(sum(bool(r.get('indirect')) for r in scored))}")
    print(f"  off topic:                         {share(sum(bool(r.get('off_topic')) for r in scored))}")
    run_acc, run_f1 = scores(gold, [row["label"] for row in scored])
    alone_pred = [alone[row["id"]]["prediction"] for row in scored]
    alone_acc, alone_f1 = scores(gold, alone_pred)
    with_reading = [row for row in scored if row["label"] is not None]
    agree = sum(row["label"] == labels[row["id"]] for row in with_reading)
    print(
        f"run agrees with the doctors:         {share(sum(r['label'] == g for r, g in zip(scored, gold, strict=True)))}"
        f"  macro-F1 {run_f1:.3f} (no reading counts as wrong)"
    )
    print(f"  where the run states a reading:    {share(agree, len(with_reading))}")
    print(
        f"reader alone agrees (eval):          {share(sum(p == g for p, g in zip(alone_pred, gold, strict=True)))}"
        f"  macro-F1 {alone_f1:.3f}"
    )
    both = Counter(
        (alone[row["id"]]["prediction"] == labels[row["id"]], row["label"] == labels[row["id"]]) for row in scored
    )
    print(
        f"reader right, run wrong: {both[(True, False)]}; reader wrong, run right: {both[(False, True)]}; "
        f"both right: {both[(True, True)]}; both wrong: {both[(False, False)]}"
    )
    why = Counter(
        "not collected"
        if not row["collected"]
        else "off topic"
        if row.get("off_topic")
        else "not counted"
        if not row["counted"]
        else "no clear result"
        if row["label"] is None
        else "read otherwise"
        for row in scored
        if alone[row["id"]]["prediction"] == labels[row["id"]] and row["label"] != labels[row["id"]]
    )
    print(f"where the reader is right and the run is not: {dict(why)}")
    print(
        f"run accuracy {run_acc:.3f} vs reader alone {alone_acc:.3f}; "
        f"verdicts {dict(Counter(str(r.get('verdict')) for r in scored))}"
    )
    seconds = [row["seconds"] for row in scored]
    print(f"seconds per run: mean {sum(seconds) / n:.1f}, total {sum(seconds):.0f}")


def sample(prompts: Sequence[eval_inference.Prompt], limit: int | None) -> list[eval_inference.Prompt]:
    """``limit`` prompts spread evenly over the validation prompts (in PromptID order), else all of them."""
    ordered = sorted(prompts, key=lambda p: int(p.id) if p.id.isdigit() else p.id)
    if not limit or limit >= len(ordered):
        return ordered
    step = len(ordered) / limit
    return [ordered[int(i * step)] for i in range(limit)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None, help="this many validation prompts, spread evenly")
    parser.add_argument("--out", type=Path, default=None, help="keep the per-prompt lines here (JSON Lines)")
    parser.add_argument("--home", type=Path, default=None, help="reuse this home (its library already added)")
    args = parser.parse_args()
    data: Path = args.data
    if not (data / "prompts.csv").is_file():
        sys.exit(f"{data}: no prompts.csv (the Evidence Inference data, ../shared/data/evidence-inference)")
    configure_logging()
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    splits = eval_inference.split_of(data)
    prompts = [p for p in eval_inference.read_prompts(data / "prompts.csv") if splits.get(p.pmcid) == "validation"]
    chosen = sample(prompts, args.limit)
    pmcids = sorted({p.pmcid for p in prompts})
    with tempfile.TemporaryDirectory(prefix="deepcritical-libtrials-", ignore_cleanup_errors=True) as temporary:
        home = args.home or Path(temporary) / "home"
        work = Path(temporary)
        started = time.perf_counter()
        kinds = write_articles(data, pmcids, home / "articles")
        ids = library_add(home, home / "articles")
        print(
            f"{len(kinds)} validation articles ({Counter(kinds.values())}) in the library in "
            f"{time.perf_counter() - started:.0f}s; {len(ids)} documents; {len(chosen)} of {len(prompts)} prompts"
        )
        alone = reader_alone(chosen, data, work)
        rows = asyncio.run(run_all(chosen, ids, home, work))
    labels, _ = eval_inference.read_labels(data / "annotations.csv")
    if args.out:
        with args.out.open("w", encoding="utf-8") as sink:
            for row in rows:
                extra = {"gold": labels.get(row["id"]), "alone": alone[row["id"]]["prediction"]}
                extra["alone_evidence"] = [e["text"][:300] for e in alone[row["id"]]["evidence"][:1]]
                sink.write(json.dumps(row | extra) + "\n")
    report(rows, alone, labels)


if __name__ == "__main__":
    main()
