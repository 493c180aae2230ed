"""What every evaluation of the research loop shares (``eval pubmedqa``, ``scifact``, ``medevidence``): its input
files read with errors naming file and line, its own store under ``OUT/store`` with each collection embedded once,
one question run as every run is (a ``RunRequest`` through ``run_to_folder``, its folder under ``OUT/runs/``,
its evidence in memory), and the figures every summary opens with."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2

from deepcritical.config import Settings
from deepcritical.errors import ConfigError
from deepcritical.evidence import documents
from deepcritical.evidence.memory import MemoryStore
from deepcritical.evidence.resources import Resources
from deepcritical.outputs import Verdict
from deepcritical.run import setup
from deepcritical.run.execute import RunSource, run_to_folder
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.request import RunRequest
from deepcritical.sources.factory import build_sources
from deepcritical.sources.grading import grade_record
from deepcritical.sources.library import LibraryTool


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it ({error.strerror or error})") from error
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from error


def document_ids(outcome: ResearchOutcome) -> tuple[list[str], list[str]]:
    """The documents the run collected, and those its report and verdict cite (in the order cited)."""
    by_id = {item.id: item for item in outcome.evidence}
    collected = list(dict.fromkeys(item.passage.document_id for item in outcome.evidence if item.passage))
    cited_ids = [*(outcome.verdict.evidence_ids if outcome.verdict else []), *outcome.report.references]
    cited = [passage.document_id for i in cited_ids if i in by_id and (passage := by_id[i].passage) is not None]
    return collected, list(dict.fromkeys(cited))


def verdict_of(outcome: ResearchOutcome) -> Verdict:
    """The run's verdict; a run that reached none is scored as insufficient."""
    return outcome.verdict or Verdict(label="insufficient", confidence=0.0)


async def ensure_collection(resources: Resources, name: str, pool: Sequence[documents.Document]) -> float:
    """Embed and store the pool once (on the evaluation's resources: its connection and embedding service): a
    collection already holding every passage is reused. Seconds taken."""
    started = time.perf_counter()
    connection = resources.connection()
    wanted = sum(len(document.passages) for document in pool)
    if documents.exists(connection, name):
        target = documents.collection_name(name)
        with connection.session(touches=(target,), writes=False) as session:
            if session.collection(target).count() == wanted:
                return time.perf_counter() - started
    # The service reads the per-user vector cache (``vector_cache.py``) before it embeds: another --out
    # folder (or a larger --limit) embeds only the passages no evaluation embedded before.
    documents.add_documents(
        connection,
        resources.embeddings,
        name,
        pool,
        grader=lambda title, text, types, mesh: grade_record(
            title=title, text=text, publication_types=types, mesh_headings=mesh
        ),
    )
    return time.perf_counter() - started


def eval_request(question: str, collection: str) -> RunRequest:
    """An evaluation's run of ``question``: the library source only (the benchmark's collection), no recall."""
    return RunRequest(question=question, sources=["library"], collection=collection, recall=False)


def eval_settings(settings: Settings, out: Path, collection: str) -> Settings:
    """The evaluation's settings: its own store under ``out``, kept for good, never demo; its runs' options
    are ``eval_request``'s."""
    base = settings.with_values(home=out / "store", retention=None, demo_mode=False, demo_sources=False)
    return eval_request("", collection).settings(base)


def run_folder_name(question_id: str) -> str:
    """A question's run folder: its id, with anything but letters, digits, ``-`` and ``_`` as ``_``."""
    return "".join(char if char.isascii() and (char.isalnum() or char in "-_") else "_" for char in question_id)[:80]


async def run_question(
    text: str,
    collection: str,
    run_settings: Settings,
    resources: Resources,
    library: LibraryTool,
    folder: Path,
) -> ResearchOutcome:
    """One question run over ``collection`` (``run_settings``: ``eval_settings`` for it) into ``folder``: the
    run's own parts on its client, the evaluation's resources, the collection indexed once (``library``) and the
    evidence in memory."""
    store = MemoryStore(resources.embeddings, dedup_threshold=run_settings.dedup_threshold)

    def in_memory(settings: Settings, client: httpx2.AsyncClient, store: MemoryStore = store) -> RunSource:
        handler = build_sources(settings, client, library=library).handler
        return Orchestrator(setup.assemble(settings, client, handler=handler, store=store))

    # A folder without its prediction is a run an interrupted evaluation left: it is run again, afresh.
    await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)
    try:
        finished = await run_to_folder(
            text,
            run_settings,
            folder=folder,
            request=eval_request(text, collection),
            run_source=in_memory,
            resources=resources,
        )
    finally:
        await store.close()
    return finished.outcome


def run_summary(
    benchmark: str, lines: Sequence[dict[str, Any]], answer: str, published: str, timing: dict[str, float]
) -> dict[str, Any]:
    """The figures every summary opens with: items, time, who gave the verdicts, degraded and failed runs, and
    what was predicted (each line's ``answer`` field), beside the published figures."""
    seconds = [float(line["seconds"]) for line in lines]
    return {
        "benchmark": benchmark,
        "items": len(lines),
        "seconds_per_item": round(sum(seconds) / len(seconds), 3) if seconds else None,
        **timing,
        "verdict_by": dict(Counter(str(line.get("verdict_by")) for line in lines)),
        "degraded": sum(bool(line.get("degraded")) for line in lines),
        "errors": sum(bool(line.get("error")) for line in lines),
        "predicted": dict(Counter(line[answer] for line in lines)),
        "published": published,
    }
