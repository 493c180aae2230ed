"""How the store writes: the embedding text of an item, which records a write puts and which it retires
when an item is stored again under another identity (``merge_writes``, the run's merge policy), and the
writes of one ``add`` in one session (``write_all``)."""

from __future__ import annotations

from collections.abc import Sequence

from deepcritical.evidence import chroma
from deepcritical.evidence.embeddings import Vectors, passage_text
from deepcritical.models import Evidence, merge_records


def embedding_text(evidence: Evidence) -> str:
    return passage_text(evidence.citation.title, evidence.content)


def merge_writes(items: Sequence[Evidence], stored: dict[str, chroma.Stored]) -> tuple[list[Evidence], list[str]]:
    """The records to write (new items, and stored items whose merge with the new sighting changed) and the
    stored ids to remove: records of the same item under an id the merge did not keep."""
    writes: list[Evidence] = []
    retired: list[str] = []
    for item in items:
        records = [stored[key].evidence for key in dict.fromkeys((item.id, *item.identity_keys)) if key in stored]
        merged = item
        for record in records:
            merged = merge_records(record, merged)
        kept = stored.get(merged.id)
        if kept is None or merged != kept.evidence:
            writes.append(merged)
        retired += [record.id for record in records if record.id != merged.id]
    return writes, list(dict.fromkeys(retired))


def write_all(
    plan: list[tuple[str, list[Evidence], Vectors]],
    max_batch: int,
    retired: list[tuple[str, list[str]]],
    session: chroma.Session,
) -> None:
    for collection, items, matrix in plan:
        chroma.upsert(session.collection(collection), max_batch, items, matrix)
    for collection, ids in retired:
        if ids:
            session.collection(collection).delete(ids=ids)
