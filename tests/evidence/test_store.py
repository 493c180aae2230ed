"""EvidenceStore with the real model, on the embedded store and on a real Chroma server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore
from deepcritical.evidence.embeddings import Vectors
from deepcritical.models import Citation, Evidence
from helpers.stores import OpenStore, make_evidence, settings_for

pytestmark = pytest.mark.model

METFORMIN = make_evidence(
    "101",
    "Metformin reduces the risk of Alzheimer's disease in patients with type 2 diabetes.",
    title="Metformin and Alzheimer's disease risk",
)
METFORMIN_WEB = make_evidence(
    "metformin-news",
    "In patients with type 2 diabetes, metformin lowers the risk of developing Alzheimer's disease.",
    title="Metformin use and risk of Alzheimer's disease",
    source="web",
    pmid=False,
)
INSULIN = make_evidence(
    "102", "Metformin improves insulin sensitivity in skeletal muscle of obese adults.", title="Metformin and insulin"
)
STATINS = make_evidence(
    "103", "Statin therapy lowers LDL cholesterol and reduces cardiovascular events.", title="Statins and LDL"
)
ASPIRIN = make_evidence(
    "104", "Low-dose aspirin inhibits platelet aggregation after myocardial infarction.", title="Aspirin after MI"
)


async def test_added_evidence_round_trips_exactly(open_store: OpenStore) -> None:
    rich = Evidence(
        content="Überblick: Metformin senkt das Demenzrisiko — 二甲双胍 — résumé 🧪",
        citation=Citation(
            source="pubmed",
            title="Kohortenstudie zu Metformin",
            url="https://pubmed.ncbi.nlm.nih.gov/555/",
            date="2021-03-04",
            authors=("Müller A", "Łukasz B"),
            journal="Diabetologia",
            doi="10.1000/XYZ.1",
            pmid="555",
            pmcid="PMC1",
            publication_types=("Journal Article", "Cohort Study"),
        ),
        relevance=0.75,
        found_by=("pubmed", "searxng"),
    )
    store = await open_store()
    assert await store.add([rich, STATINS]) == 2
    assert await store.get(["pmid:555", "pmid:nope", "pmid:103", "pmid:555"]) == [rich, STATINS]
    assert sorted(item.id for item in await store.all()) == ["pmid:103", "pmid:555"]


async def test_adding_twice_stores_once_and_merges_sources(open_store: OpenStore) -> None:
    store = await open_store()
    assert await store.add([METFORMIN, STATINS]) == 2
    assert await store.add([METFORMIN, STATINS]) == 0
    assert await store.count() == 2
    seen_again = METFORMIN.model_copy(update={"found_by": ("searxng",)})
    assert await store.add([seen_again]) == 0
    assert await store.count() == 2
    (stored,) = await store.get([METFORMIN.id])
    assert set(stored.found_by) == {"pubmed", "searxng"}


async def test_dedup_drops_a_paraphrase_keeps_distinct_findings_and_merges_sources(open_store: OpenStore) -> None:
    store = await open_store()
    result = await store.deduplicate([METFORMIN, INSULIN, METFORMIN_WEB, STATINS])
    assert [item.id for item in result.kept] == [METFORMIN.id, INSULIN.id, STATINS.id]
    assert result.duplicates == {METFORMIN_WEB.id: METFORMIN.id}
    assert set(result.kept[0].found_by) == {"pubmed", "web"}
    assert await store.count() == 0, "deduplicate does not add"


async def test_dedup_against_the_store_credits_the_stored_item(open_store: OpenStore) -> None:
    store = await open_store()
    await store.add([METFORMIN, STATINS])
    result = await store.deduplicate([METFORMIN_WEB, ASPIRIN])
    assert result.kept == [ASPIRIN]
    assert result.duplicates == {METFORMIN_WEB.id: METFORMIN.id}
    (stored,) = await store.get([METFORMIN.id])
    assert set(stored.found_by) == {"pubmed", "web"}


async def test_rechecking_stored_items_never_drops_any(open_store: OpenStore) -> None:
    # The bug this guards: each stored item matched its own stored copy, so every re-check dropped
    # everything and the evidence count fell to zero.
    store = await open_store()
    items = [METFORMIN, INSULIN, STATINS, ASPIRIN]
    await store.add(items)
    for _ in range(3):
        result = await store.deduplicate(items)
        assert result.kept == items
        assert result.duplicates == {}
        await store.add(result.kept)
        assert await store.count() == 4


async def test_a_stored_item_and_its_paraphrase_keep_the_stored_one(open_store: OpenStore) -> None:
    store = await open_store()
    await store.add([METFORMIN])
    result = await store.deduplicate([METFORMIN_WEB, METFORMIN])
    assert [item.id for item in result.kept] == [METFORMIN.id]
    assert result.duplicates == {METFORMIN_WEB.id: METFORMIN.id}
    assert set(result.kept[0].found_by) == {"pubmed", "web"}
    await store.add(result.kept)
    assert await store.count() == 1


async def test_dedup_threshold_comes_from_settings(store_settings: Settings, open_store: OpenStore) -> None:
    strict = store_settings.model_copy(update={"dedup_threshold": 0.999})
    store = await open_store(settings=strict)
    result = await store.deduplicate([METFORMIN, METFORMIN_WEB])
    assert len(result.kept) == 2


async def test_empty_batches_are_no_ops(open_store: OpenStore) -> None:
    store = await open_store()
    assert await store.add([]) == 0
    result = await store.deduplicate([])
    assert result.kept == []
    assert result.duplicates == {}


async def test_search_similar_finds_by_meaning(open_store: OpenStore) -> None:
    store = await open_store()
    await store.add([METFORMIN, STATINS, ASPIRIN])
    hits = await store.search_similar("diabetes drug and dementia", n=2)
    assert hits[0].evidence.id == METFORMIN.id
    assert len(hits) == 2
    assert 0 < hits[1].score < hits[0].score <= 1.0
    assert await (await open_store("empty-run")).search_similar("anything") == []


async def test_related_recalls_an_earlier_run_from_the_library(open_store: OpenStore) -> None:
    earlier = await open_store("run-earlier")
    await earlier.add([METFORMIN, STATINS])
    later = await open_store("run-later")
    await later.add([ASPIRIN])
    assert await later.count() == 1
    hits = await later.related("metformin and dementia", exclude_ids=set(), n=2)
    assert hits[0].evidence.id == METFORMIN.id
    hits = await later.related("metformin and dementia", exclude_ids={METFORMIN.id}, n=5)
    assert METFORMIN.id not in {hit.evidence.id for hit in hits}
    assert {hit.evidence.id for hit in hits} == {STATINS.id, ASPIRIN.id}


async def test_demo_evidence_never_reaches_a_real_runs_library(open_store: OpenStore, store_settings: Settings) -> None:
    demo = await open_store("run-demo", store_settings.model_copy(update={"demo_mode": True}))
    await demo.add([METFORMIN])
    live = await open_store("run-live")
    await live.add([STATINS])
    assert [hit.evidence.id for hit in await live.related("metformin and dementia", exclude_ids=set(), n=5)] == [
        STATINS.id
    ]
    later_demo = await open_store("run-demo-2", store_settings.model_copy(update={"demo_mode": True}))
    hits = await later_demo.related("metformin and dementia", exclude_ids=set(), n=5)
    assert [hit.evidence.id for hit in hits] == [METFORMIN.id]


async def test_hybrid_search_and_judge_selection(open_store: OpenStore) -> None:
    store = await open_store()
    copy = make_evidence("105", METFORMIN.content + " (a second report)", title=METFORMIN.citation.title)
    await store.add([METFORMIN, copy, INSULIN, STATINS, ASPIRIN])
    keyword = await store.search("platelet aggregation", n=5, mode="bm25")
    assert [hit.evidence.id for hit in keyword] == [ASPIRIN.id]
    hybrid = await store.search("metformin dementia risk", n=3)
    assert {hit.evidence.id for hit in hybrid[:2]} == {METFORMIN.id, copy.id}
    chosen = await store.select_for_judge("metformin dementia risk", k=2)
    assert len(chosen) == 2
    assert len({METFORMIN.id, copy.id} & {item.id for item in chosen}) == 1, "near copies crowd out nothing"
    await store.add([make_evidence("106", "Aspirin and platelets in stroke prevention.")])
    assert len(await store.search("aspirin", n=5, mode="bm25")) == 2, "the index is rebuilt after a write"


async def test_very_long_text_is_stored_whole(open_store: OpenStore) -> None:
    content = "Metformin lowered amyloid burden in mice. " + "Further details follow. " * 2000
    long_item = make_evidence("200", content, title="A very long abstract")
    store = await open_store()
    await store.add([long_item, STATINS])
    assert (await store.get([long_item.id]))[0].content == content
    assert (await store.search_similar("metformin amyloid mice", n=1))[0].evidence.id == long_item.id


async def test_blank_query_is_a_clear_error(open_store: OpenStore) -> None:
    from deepcritical.errors import EmbeddingError

    store = await open_store()
    await store.add([STATINS])
    with pytest.raises(EmbeddingError, match="empty or whitespace-only"):
        await store.search_similar("   ")


async def test_a_second_process_sees_what_the_first_stored(store_settings: Settings, open_store: OpenStore) -> None:
    store = await open_store("run-shared")
    await store.add([METFORMIN, STATINS])
    script = (
        "import asyncio, json\n"
        "from deepcritical.config import Settings\n"
        "from deepcritical.evidence import EmbeddingService, EvidenceStore\n"
        "async def main():\n"
        "    store = await EvidenceStore.open(Settings(), EmbeddingService(), 'run-shared')\n"
        "    hits = await store.search_similar('cholesterol lowering', n=1)\n"
        "    print(json.dumps({'count': await store.count(), 'ids': sorted(e.id for e in await store.all()),\n"
        "                      'top': hits[0].evidence.id}))\n"
        "    await store.close()\n"
        "asyncio.run(main())\n"
    )
    env = {key: value for key, value in os.environ.items() if key not in {"CHROMA_HOST", "CHROMA_PORT"}}
    env["DEEPCRITICAL_HOME"] = str(store_settings.home)
    if store_settings.chroma_host:
        env["CHROMA_HOST"], env["CHROMA_PORT"] = store_settings.chroma_host, str(store_settings.chroma_port)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, stderr.decode()
    answer = json.loads(stdout.decode().strip().splitlines()[-1])
    assert answer == {"count": 2, "ids": sorted([METFORMIN.id, STATINS.id]), "top": STATINS.id}


async def test_reopening_after_close_finds_the_evidence(store_settings: Settings, embeddings: EmbeddingService) -> None:
    first = await EvidenceStore.open(store_settings, embeddings, "run-reopen")
    await first.add([METFORMIN])
    await first.close()
    async with await EvidenceStore.open(store_settings, embeddings, "run-reopen") as second:
        assert await second.get([METFORMIN.id]) == [METFORMIN]


async def test_runs_are_separate_collections(open_store: OpenStore) -> None:
    one, two = await open_store("run-a"), await open_store("run/a")
    await one.add([METFORMIN])
    assert one.collection_name != two.collection_name
    assert await two.count() == 0


async def test_collections_from_another_model_are_refused(open_store: OpenStore, store_settings: Settings) -> None:
    from deepcritical.errors import StoreError

    await open_store()
    other_model = EmbeddingService(str(Path("/opt/some-other-model")))
    with pytest.raises(StoreError, match=r"embedding model 'all-MiniLM-L6-v2'.*/opt/some-other-model"):
        await EvidenceStore.open(store_settings, other_model, "run-1")


async def test_n_must_be_positive(open_store: OpenStore) -> None:
    store = await open_store()
    with pytest.raises(ValueError, match="n must be at least 1"):
        await store.search_similar("x", n=0)
    assert await store.select_for_judge("x", k=0) == []


async def test_unwritable_home_names_the_path(tmp_path: Path, embeddings: EmbeddingService) -> None:
    from deepcritical.errors import StoreError

    # Tests run as root, who may write anywhere: a path below a regular file cannot exist for anyone.
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match=rf"{blocker}/home/chroma.*DEEPCRITICAL_HOME"):
        await EvidenceStore.open(settings_for(blocker / "home"), embeddings, "run-1")


async def test_unreachable_server_names_it(tmp_path: Path, embeddings: EmbeddingService) -> None:
    import socket

    from deepcritical.errors import StoreError

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreError, match=rf"Chroma server at 127\.0\.0\.1:{port}.*CHROMA_HOST"):
        await EvidenceStore.open(settings_for(tmp_path, "127.0.0.1", port), embeddings, "run-1")


async def test_closing_one_runs_store_leaves_another_working(open_store: OpenStore) -> None:
    first, second = await open_store("run-first"), await open_store("run-second")
    await first.close()
    await first.close()
    assert await second.add([STATINS]) == 1
    assert await second.get([STATINS.id]) == [STATINS]


async def test_add_after_deduplicate_embeds_each_new_text_once(
    open_store: OpenStore, embeddings: EmbeddingService, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[str] = []
    real_aembed = embeddings.aembed

    async def counting_aembed(texts: Sequence[str]) -> Vectors:
        embedded.extend(texts)
        return await real_aembed(texts)

    monkeypatch.setattr(embeddings, "aembed", counting_aembed)
    store = await open_store()
    result = await store.deduplicate([METFORMIN, STATINS, ASPIRIN])
    assert await store.add(result.kept) == 3
    assert len(embedded) == 3


async def test_a_pubmed_record_replaces_the_page_about_its_study_in_the_run_and_the_library(
    open_store: OpenStore, ncbi_data: Path
) -> None:
    """A web page at a study's DOI is stored first; the real PubMed record of that study replaces it under
    its PMID, graded, in the run and in the library, so a later run recalls the study once."""
    from deepcritical.sources.ncbi_parse import parse_efetch

    records = [
        item
        for path in sorted((ncbi_data / "efetch_single").glob("*.xml"))
        for item in parse_efetch(path.read_text(encoding="utf-8")).evidence
        if item.citation.doi and item.grade.basis == "publication_type"
    ]
    if not records:
        pytest.skip("no graded PubMed record with a DOI in the NCBI data")
    record = records[0]
    page = Evidence(
        content=f"News about a study: {record.citation.title}",
        citation=Citation(source="web", title=record.citation.title, url=f"https://doi.org/{record.citation.doi}"),
    )
    first = await open_store("run-first")
    assert await first.add([page]) == 1
    assert await first.add([record]) == 0  # the same item, under a better identity
    (stored,) = await first.all()
    assert stored.id == record.id
    assert stored.grade == record.grade
    assert set(stored.found_by) == {"web", "pubmed"}
    later = await open_store("run-later")
    hits = await later.related(record.citation.title, exclude_ids=set(), n=5)
    assert [hit.evidence.id for hit in hits] == [record.id]
