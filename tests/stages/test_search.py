"""The search step on its own: sources, de-duplication, the evidence cap, related recall."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcritical.models import Citation, Evidence, SearchResult, SourceFailure
from deepcritical.sources.ncbi_parse import parse_efetch
from deepcritical.stages.search import source_status
from helpers.research_fakes import CORPUS, QUESTION, FakeHandler, FakeStore, corpus_evidence, search_stage


async def test_a_step_stores_new_items_and_reports_sources() -> None:
    handler = FakeHandler(failures=[SourceFailure(source="searxng", reason="HTTP 503 after 3 attempt(s)")])
    store = FakeStore()
    agent = search_stage(handler, store, max_results_per_source=5, max_evidence=100)
    step = await agent.run(["metformin mice", "metformin patients", "metformin mice"], question=QUESTION)
    assert handler.queries == ["metformin mice", "metformin patients"]
    assert step.sources_answered == ["pubmed", "web"]
    assert step.sources_failed == {"searxng": "searxng: HTTP 503 after 3 attempt(s)"}
    assert step.found == 12
    assert set(step.kept_ids) == set(store.items) == set(agent.evidence.items) == {item.id for item in CORPUS}
    assert not step.capped


async def test_semantic_duplicates_are_dropped_and_reported() -> None:
    twin = corpus_evidence(50, CORPUS[0].content, source="web", url="https://mirror.example.org/copy")
    agent = search_stage(FakeHandler([CORPUS[0], twin]), FakeStore(), max_evidence=100)
    step = await agent.run(["metformin"])
    assert step.kept_ids == [CORPUS[0].id]
    assert step.duplicates == {twin.id: CORPUS[0].id}
    assert step.deduplicated == 1


async def test_the_evidence_cap_stops_adding_and_is_reported() -> None:
    many = [
        corpus_evidence(i, f"Metformin finding number {i} in a distinct text.", relevance=i / 100) for i in range(20)
    ]
    store = FakeStore()
    agent = search_stage(FakeHandler(many), store, max_evidence=5)
    step = await agent.run(["metformin"])
    assert step.capped
    assert agent.evidence.full
    assert len(store.items) == len(agent.evidence.items) == 5
    assert {item.relevance for item in agent.evidence} == {0.19, 0.18, 0.17, 0.16, 0.15}
    second = await agent.run(["metformin finding"])
    assert second.kept_ids == []
    assert second.capped
    assert len(store.items) == 5


async def test_items_seen_again_keep_every_source() -> None:
    item = CORPUS[0]
    again = item.model_copy(update={"found_by": ("web",)})
    answers = iter([[item], [again]])
    agent = search_stage(FakeHandler(answer=lambda _query: next(answers)), FakeStore(), max_evidence=10)
    await agent.run(["first"])
    step = await agent.run(["second"])
    assert step.already_collected == 1
    assert agent.evidence.items[item.id].found_by == ("pubmed", "web")


async def test_related_stored_evidence_is_recalled() -> None:
    store = FakeStore()
    earlier = corpus_evidence(90, "Metformin and Alzheimer's disease: an earlier run found this review.")
    await store.add([earlier])
    agent = search_stage(FakeHandler(CORPUS[:1]), store, max_evidence=10)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert step.related_ids == [earlier.id]
    assert earlier.id in agent.evidence.items


def test_source_status_separates_answers_from_failures() -> None:
    results = [
        SearchResult(
            query="a",
            evidence=[],
            sources_searched=["pubmed", "web"],
            total_found=0,
            failures=[SourceFailure(source="web", reason="down")],
        ),
        SearchResult(query="b", evidence=[], sources_searched=["pubmed", "web"], total_found=0),
    ]
    answered, failed, errors = source_status(results)
    assert answered == ["pubmed", "web"]
    assert failed == {"web": "web: down"}
    assert errors == ["web: down"]


async def test_recalled_library_items_join_the_run_collection() -> None:
    earlier = corpus_evidence(91, "Metformin and Alzheimer's disease: a review an earlier run stored in the library.")
    store = FakeStore(library=[earlier])
    agent = search_stage(FakeHandler(CORPUS[:1]), store, max_evidence=10)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert step.related_ids == [earlier.id]
    assert earlier.id in store.items  # the run's collection, which the judge's selection reads
    assert earlier.id in {item.id for item in await store.select_for_judge(QUESTION, 10)}


async def test_recall_respects_the_evidence_cap() -> None:
    library = [corpus_evidence(92 + i, f"Metformin and Alzheimer's disease, library finding {i}.") for i in range(3)]
    store = FakeStore(library=library)
    agent = search_stage(FakeHandler(CORPUS[:1]), store, max_evidence=2)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert len(step.kept_ids) == 1
    assert len(step.related_ids) == 1
    assert set(store.items) == set(agent.evidence.items) == {CORPUS[0].id, *step.related_ids}


async def test_a_paper_found_later_under_another_identity_replaces_the_page_collected_first() -> None:
    web_page = corpus_evidence(
        70, "Metformin and dementia, a cohort: lower risk.", source="web", url="https://doi.org/10.5555/m1"
    )
    pubmed = corpus_evidence(71, "BACKGROUND: a cohort. RESULTS: metformin users had lower dementia risk.")
    pubmed = pubmed.model_copy(update={"citation": pubmed.citation.model_copy(update={"doi": "10.5555/m1"})})
    answers = iter([[web_page], [pubmed]])
    store = FakeStore()
    agent = search_stage(FakeHandler(answer=lambda _query: next(answers)), store, max_evidence=10)
    await agent.run(["first"])
    step = await agent.run(["second"])
    assert step.already_collected == 1
    assert step.kept_ids == []
    # The PubMed record wins under its own id, in the run and in the store; the page's id still finds it.
    assert list(agent.evidence.items) == list(store.items) == [pubmed.id]
    assert set(agent.evidence.items[pubmed.id].found_by) == {"web", "pubmed"}
    assert agent.evidence.collected_as(web_page) == pubmed.id


async def test_a_recalled_item_found_again_by_a_source_counts_as_found_by_this_run() -> None:
    earlier = CORPUS[0]
    store = FakeStore(library=[earlier])
    answers = iter([[], [earlier.model_copy(update={"found_by": ("web",)})]])
    stage = search_stage(FakeHandler(answer=lambda _query: next(answers)), store, max_evidence=10)
    first = await stage.run(["nothing new"], question=QUESTION)
    assert first.related_ids == [earlier.id]
    assert stage.evidence.recalled_ids == [earlier.id]
    assert stage.evidence.found == []
    await stage.run(["metformin again"], question=QUESTION)
    assert stage.evidence.recalled_ids == []
    assert [item.id for item in stage.evidence.found] == [earlier.id]
    assert stage.evidence.items[earlier.id].found_by == ("pubmed", "web")


def first_graded_pubmed_record(ncbi: Path) -> Evidence:
    """The first real PubMed record (in file order) with a DOI and a grade from its publication type."""
    for path in sorted((ncbi / "efetch_single").glob("*.xml")):
        for item in parse_efetch(path.read_text(encoding="utf-8")).evidence:
            if item.citation.doi and item.grade.basis == "publication_type" and item.grade.level is not None:
                return item
    pytest.skip(f"no graded PubMed record with a DOI under {ncbi / 'efetch_single'}")


@pytest.mark.parametrize("page_first", [True, False])
async def test_a_real_pubmed_record_wins_over_a_news_page_about_the_same_study(
    ncbi_data: Path, page_first: bool
) -> None:
    record = first_graded_pubmed_record(ncbi_data)
    page = Evidence(
        content=f"News: {record.citation.title} A new study reports its findings.",
        citation=Citation(
            source="web",
            title=f"What a new study says: {record.citation.title}",
            url=f"https://doi.org/{record.citation.doi}",
        ),
        relevance=0.9,
    )
    assert page.grade.level is None or page.grade.level > (record.grade.level or 5)
    first, second = (page, record) if page_first else (record, page)
    answers = iter([[first], [second]])
    store = FakeStore()
    stage = search_stage(FakeHandler(answer=lambda _query: next(answers)), store, max_evidence=10)
    await stage.run(["first"])
    await stage.run(["second"])
    (kept,) = stage.evidence.items.values()
    assert kept.id == record.id == f"pmid:{record.citation.pmid}"
    assert kept.grade == record.grade  # the grade of the study, not the page's
    assert set(kept.found_by) == {"pubmed", "web"}
    assert list(store.items) == [record.id]
    assert list(store.library) == [record.id]  # stored once, so recalled once
    # Recalled by a later run that finds the page first, it is still one item, the graded one.
    later = search_stage(
        FakeHandler(answer=lambda _query: [page]), FakeStore(library=[store.library[record.id]]), max_evidence=10
    )
    await later.run(["again"], question=record.citation.title)
    assert [item.id for item in later.evidence] == [record.id]


async def test_code_or_a_paragraph_written_as_a_query_is_never_searched() -> None:
    # What SmolLM2-135M wrote as queries in a real run, and a paragraph, beside one real query.
    code = "(]) ```python # Replace with your code here. ``` import requests as cx def search_tail(term): url = f)"
    call = "(, id=908423165) response = requests.get(url) return json.loads(response.json())[term]"
    paragraph = " ".join(["metformin"] * 40)
    handler = FakeHandler()
    agent = search_stage(handler, FakeStore(), max_evidence=100)
    only_noise = await agent.search([code, call, paragraph])
    assert only_noise["status"].startswith("not run: these are not search queries")
    assert handler.queries == []
    mixed = await agent.search([code, "metformin dementia cohort"])
    assert mixed["status"] == "searched"
    assert len(handler.queries) == 1
    assert "requests" not in handler.queries[0]
    assert "dementia cohort" in handler.queries[0]


async def test_markup_or_code_is_judged_as_written_not_after_its_stray_punctuation_is_tidied() -> None:
    # Tidied first, "<b>metformin</b>" was searched as "b>metformin</b" and a fenced block as "python import requests".
    handler = FakeHandler()
    agent = search_stage(handler, FakeStore(), max_evidence=100)
    refused = await agent.search(["<b>metformin</b>", "```python\nimport requests\n```"])
    assert refused["status"].startswith("not run: these are not search queries")
    assert handler.queries == []
