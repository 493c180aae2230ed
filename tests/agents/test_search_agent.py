"""The search step on its own: sources, de-duplication, the evidence cap, related recall."""

from __future__ import annotations

from research_fakes import CORPUS, QUESTION, FakeHandler, FakeStore, evidence

from deepcritical.stages.search import SearchAgent, source_status
from deepcritical.models import SearchResult


async def test_a_step_stores_new_items_and_reports_sources() -> None:
    handler = FakeHandler(errors=["searxng: HTTP 503 after 3 attempt(s)"])
    store = FakeStore()
    agent = SearchAgent(handler, store, max_results_per_source=5, max_evidence=100)
    step = await agent.run(["metformin mice", "metformin patients", "metformin mice"], question=QUESTION)
    assert handler.queries == ["metformin mice", "metformin patients"]
    assert step.sources_answered == ["pubmed", "web"]
    assert step.sources_failed == {"searxng": "searxng: HTTP 503 after 3 attempt(s)"}
    assert step.found == 12
    assert set(step.kept_ids) == set(store.items) == set(agent.collected) == {item.id for item in CORPUS}
    assert not step.capped


async def test_semantic_duplicates_are_dropped_and_reported() -> None:
    twin = evidence(50, CORPUS[0].content, source="web", url="https://mirror.example.org/copy")
    agent = SearchAgent(FakeHandler([CORPUS[0], twin]), FakeStore(), max_evidence=100)
    step = await agent.run(["metformin"])
    assert step.kept_ids == [CORPUS[0].id]
    assert step.duplicates == {twin.id: CORPUS[0].id}
    assert step.deduplicated == 1


async def test_the_evidence_cap_stops_adding_and_is_reported() -> None:
    many = [evidence(i, f"Metformin finding number {i} in a distinct text.", relevance=i / 100) for i in range(20)]
    store = FakeStore()
    agent = SearchAgent(FakeHandler(many), store, max_evidence=5)
    step = await agent.run(["metformin"])
    assert step.capped
    assert agent.full
    assert len(store.items) == len(agent.collected) == 5
    assert {item.relevance for item in agent.collected.values()} == {0.19, 0.18, 0.17, 0.16, 0.15}
    second = await agent.run(["metformin finding"])
    assert second.kept_ids == []
    assert second.capped
    assert len(store.items) == 5


async def test_items_seen_again_keep_every_source() -> None:
    item = CORPUS[0]
    again = item.model_copy(update={"found_by": ("web",)})
    answers = iter([[item], [again]])
    agent = SearchAgent(FakeHandler(answer=lambda _query: next(answers)), FakeStore(), max_evidence=10)
    await agent.run(["first"])
    step = await agent.run(["second"])
    assert step.already_collected == 1
    assert agent.collected[item.id].found_by == ("pubmed", "web")


async def test_related_stored_evidence_is_recalled() -> None:
    store = FakeStore()
    earlier = evidence(90, "Metformin and Alzheimer's disease: an earlier run found this review.")
    await store.add([earlier])
    agent = SearchAgent(FakeHandler(CORPUS[:1]), store, max_evidence=10)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert step.related_ids == [earlier.id]
    assert earlier.id in agent.collected


def test_source_status_separates_answers_from_failures() -> None:
    results = [
        SearchResult(query="a", evidence=[], sources_searched=["pubmed", "web"], total_found=0, errors=["web: down"]),
        SearchResult(query="b", evidence=[], sources_searched=["pubmed", "web"], total_found=0, errors=[]),
    ]
    answered, failed, errors = source_status(results)
    assert answered == ["pubmed", "web"]
    assert failed == {"web": "web: down"}
    assert errors == ["web: down"]


async def test_recalled_library_items_join_the_run_collection() -> None:
    earlier = evidence(91, "Metformin and Alzheimer's disease: a review an earlier run stored in the library.")
    store = FakeStore(library=[earlier])
    agent = SearchAgent(FakeHandler(CORPUS[:1]), store, max_evidence=10)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert step.related_ids == [earlier.id]
    assert earlier.id in store.items  # the run's collection, which the judge's selection reads
    assert earlier.id in {item.id for item in await store.select_for_judge(QUESTION, 10)}


async def test_recall_respects_the_evidence_cap() -> None:
    library = [evidence(92 + i, f"Metformin and Alzheimer's disease, library finding {i}.") for i in range(3)]
    store = FakeStore(library=library)
    agent = SearchAgent(FakeHandler(CORPUS[:1]), store, max_evidence=2)
    step = await agent.run(["metformin AMPK"], question=QUESTION)
    assert len(step.kept_ids) == 1
    assert len(step.related_ids) == 1
    assert set(store.items) == set(agent.collected) == {CORPUS[0].id, *step.related_ids}


async def test_a_paper_found_later_under_another_identity_is_not_collected_twice() -> None:
    web_page = evidence(
        70, "Metformin and dementia, a cohort: lower risk.", source="web", url="https://doi.org/10.5555/m1"
    )
    pubmed = evidence(71, "BACKGROUND: a cohort. RESULTS: metformin users had lower dementia risk.")
    pubmed = pubmed.model_copy(update={"citation": pubmed.citation.model_copy(update={"doi": "10.5555/m1"})})
    answers = iter([[web_page], [pubmed]])
    store = FakeStore()
    agent = SearchAgent(FakeHandler(answer=lambda _query: next(answers)), store, max_evidence=10)
    await agent.run(["first"])
    step = await agent.run(["second"])
    assert step.already_collected == 1
    assert step.kept_ids == []
    assert list(agent.collected) == [web_page.id]
    assert set(agent.collected[web_page.id].found_by) == {"web", "pubmed"}
