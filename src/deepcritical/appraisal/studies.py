"""One study, one entry. An article reaches a run as its abstract (from PubMed or Europe PMC) and as
passages of its full text (from the library): several items, one study. The report numbers the study
once, lists the passages it used under that one reference, and counts the study once (``strength``);
a model reads a study by its abstract or else its results passage, never by its methods alone."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from deepcritical.appraisal.framing import no_result_section, study_key
from deepcritical.models import Evidence

# What a model reads of one study in a selection: one item, its abstract (which states the main result), else
# its results passage; a study's other parts would take the place of other studies in a bounded prompt.
MAX_PARTS_READ = 1
# What the report reads of one study besides: its Results passages, at most this many.
MAX_RESULTS_PASSAGES = 2


def group_studies(items: Iterable[Evidence]) -> list[list[Evidence]]:
    """``items`` grouped by study, in the order each study first appears; within a study, in the order given."""
    groups: dict[str, list[Evidence]] = {}
    for item in items:
        groups.setdefault(study_key(item), []).append(item)
    return list(groups.values())


def record_sources(study: Sequence[Evidence]) -> set[str]:
    """The sources that found a study's record: those of its abstract (or other record), not the library its
    full-text passages were read from; a study known only by passages was found in the library."""
    records = [item for item in study if item.passage is None] or list(study)
    return {name for item in records for name in (item.found_by or [item.citation.source])}


@dataclass(frozen=True)
class RecordCounts:
    """Records in PRISMA's sense, the one count of them the run log and the study flow both state: a study's
    record from each source that found it; the records beyond one per study are the duplicates removed."""

    identified: dict[str, int]
    studies: int

    @property
    def duplicates(self) -> int:
        return sum(self.identified.values()) - self.studies


def record_counts(studies: Sequence[Sequence[Evidence]]) -> RecordCounts:
    """The records identified per source and the studies they are, of studies grouped by ``group_studies``."""
    identified: dict[str, int] = {}
    for study in studies:
        for name in record_sources(study):
            identified[name] = identified.get(name, 0) + 1
    return RecordCounts(dict(sorted(identified.items())), len(studies))


def lead(group: Sequence[Evidence]) -> Evidence:
    """The item a study's reference shows: its abstract (the record of the whole article), else its first
    passage."""
    return next((item for item in group if item.passage is None), group[0])


def study_numbers(groups: Sequence[Sequence[Evidence]]) -> dict[str, int]:
    """Every item's reference number: one number per study, from 1, in the order of ``groups``."""
    return {item.id: number for number, group in enumerate(groups, start=1) for item in group}


def numbers_by_study(references: Sequence[str], items: Mapping[str, Evidence]) -> dict[str, int]:
    """Every collected item's reference number, given the references (one per study, in the report's order):
    an abstract's passages, and any other part of its study, share its number."""
    listed = [items[i] for i in references if i in items]
    by_study = {study_key(item): number for number, item in enumerate(listed, start=1)}
    return {item.id: by_study[key] for item in items.values() if (key := study_key(item)) in by_study}


def states_results(item: Evidence) -> bool:
    """Whether an item may state its study's result: an abstract, a snippet, or a full-text passage from a
    section other than the introduction, methods, background or back matter."""
    return item.passage is None or not no_result_section(item.passage.section, item.passage.subsection)


def _reading_order(item: Evidence) -> tuple[bool, bool]:
    """The abstract first, then a results section, then the rest (a discussion)."""
    section = (item.passage.section or "") if item.passage is not None else ""
    return item.passage is not None, "result" not in section.lower()


def readable(group: Sequence[Evidence]) -> list[Evidence]:
    """What a model reads of a study: its abstract, else its results passage (else another passage that may
    state results), and only when there is none of those, what there is (a methods passage alone still
    says what the study did)."""
    stating = [item for item in group if states_results(item)]
    stating.sort(key=_reading_order)
    return (stating or list(group))[:MAX_PARTS_READ]


def results_passages(group: Sequence[Evidence]) -> list[Evidence]:
    """A study's full-text Results passages: they may state its result in more detail than its abstract."""
    return [item for item in group if item.passage is not None and "result" in (item.passage.section or "").lower()]


def with_study_parts(chosen: Sequence[Evidence], collected: Mapping[str, Evidence]) -> list[Evidence]:
    """``chosen`` with every study it touches read by its best part and its Results passages: a methods
    passage chosen brings in the study's abstract or results passage from ``collected`` (and gives way to
    them), in the order of ``chosen``'s studies. What the report and its counted table read: the reading of a
    study may rest on its Results passage, which the report then cites with its section."""
    by_study = {study_key(group[0]): group for group in group_studies(collected.values())}
    whole: list[Evidence] = []
    for group in group_studies(chosen):
        parts = by_study.get(study_key(group[0]), group)
        whole += [*readable(parts), *results_passages(parts)[:MAX_RESULTS_PASSAGES]]
    return list({item.id: item for item in whole}.values())


def counted_parts(chosen: Sequence[Evidence], collected: Mapping[str, Evidence]) -> list[Evidence]:
    """``chosen`` with every study it touches read by all its collected parts that state its own results (its
    abstract, the passages of its abstract and of its Results), in the order of ``chosen``'s studies: what the
    counted table reads, so that a study is read by its part that states the result for the question's outcome
    (``strength``), as the result reader reads a whole article. A trial's Results run to many passages, and the
    first two collected often report other outcomes than the question's; the report's prompt, which is bounded,
    reads fewer (``with_study_parts``)."""
    by_study = {study_key(group[0]): group for group in group_studies(collected.values())}
    whole: list[Evidence] = []
    for group in group_studies(chosen):
        parts = by_study.get(study_key(group[0]), group)
        whole += [*readable(parts), *(item for item in parts if _own_results(item))]
    return list({item.id: item for item in whole}.values())


def _own_results(item: Evidence) -> bool:
    """An abstract, or a passage of an abstract or a Results section (not a discussion, which also cites other
    studies' results)."""
    section = (item.passage.section or "").lower() if item.passage is not None else "abstract"
    return "result" in section or "abstract" in section or "summary" in section


@dataclass(frozen=True)
class Study:
    """One study and every collected item of it: what the verdict weighs once. ``parts`` is what may state
    its result (its abstract, then its results passages; its methods only when nothing else was collected)."""

    key: str
    items: tuple[Evidence, ...]

    @property
    def lead(self) -> Evidence:
        return lead(self.items)

    @property
    def parts(self) -> tuple[Evidence, ...]:
        stating = [item for item in self.items if states_results(item)]
        return tuple(sorted(stating, key=_reading_order)) or self.items[:1]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)


def studies_of(items: Iterable[Evidence]) -> list[Study]:
    """``items`` as studies, in the order each study first appears: one reading unit per study."""
    return [Study(study_key(group[0]), tuple(group)) for group in group_studies(items)]
