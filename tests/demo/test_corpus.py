"""The demo corpus: visibly synthetic, covers every question from several angles, and BM25 finds the right records."""

from __future__ import annotations

from collections import Counter, defaultdict
from urllib.parse import urlsplit

import pytest

from deepcritical.demo import corpus
from deepcritical.demo.eutils import PUBLICATION_TYPE_UI
from deepcritical.demo.records import (
    DEMO_DOI_PREFIX,
    DEMO_HOST,
    DEMO_NCT_RANGE,
    DEMO_PMID_RANGE,
    DEMO_PREPRINT_PREFIX,
    RECORD_KINDS,
    ClinicalTrialsRecord,
    CollectiveAuthor,
    EuropePmcRecord,
    PubmedRecord,
    Record,
    SearxngRecord,
    WebRecord,
    YouRecord,
    load_corpus,
    strip_markup,
    topic_question,
)
from deepcritical.models import normalize_url

RECORDS = load_corpus().records
TOPICS = [topic.id for topic in load_corpus().topics]
MAIN_TOPIC = "metformin-alzheimers"


def _url(record: Record) -> str | None:
    """A web record's URL; database records (PubMed, the registry, Europe PMC) are known by their ids."""
    return record.url if isinstance(record, WebRecord | SearxngRecord | YouRecord) else None


def test_corpus_size_and_topics() -> None:
    assert len(RECORDS) >= 72
    assert len(TOPICS) >= 5
    per_topic = Counter(record.topic for record in RECORDS)
    assert set(per_topic) == set(TOPICS)
    assert per_topic[MAIN_TOPIC] >= 22
    assert per_topic.most_common(1)[0][0] == MAIN_TOPIC
    assert topic_question(MAIN_TOPIC) == "Can metformin be repurposed for Alzheimer's disease?"


def test_record_ids_are_unique() -> None:
    ids = [record.id for record in RECORDS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("topic", TOPICS)
def test_every_topic_has_mechanism_clinical_safety_and_contrary_evidence(topic: str) -> None:
    records = [record for record in RECORDS if record.topic == topic]
    assert {record.aspect for record in records} >= {"mechanism", "clinical", "safety"}
    assert any(record.stance == "contradicts" for record in records)
    assert any(record.stance == "supports" for record in records)


@pytest.mark.parametrize("topic", TOPICS)
@pytest.mark.parametrize("kind", RECORD_KINDS)
def test_every_stand_in_can_answer_every_topic(topic: str, kind: str) -> None:
    assert any(record.topic == topic and record.kind == kind for record in RECORDS)


def test_every_record_is_visibly_synthetic() -> None:
    for record in RECORDS:
        assert record.title.startswith("[DEMO] "), record.id
        if record.doi is not None:
            assert record.doi.startswith(DEMO_DOI_PREFIX), record.id
        url = _url(record)
        if url is not None:
            parts = urlsplit(url)
            assert parts.scheme == "https"
            assert parts.hostname == DEMO_HOST, record.id


def test_pubmed_records_use_the_synthetic_id_ranges() -> None:
    pubmed = [record for record in RECORDS if isinstance(record, PubmedRecord)]
    pmids = [int(record.pmid) for record in pubmed]
    assert len(pmids) == len(set(pmids))
    assert all(pmid in DEMO_PMID_RANGE for pmid in pmids)
    pmcids = [record.pmcid for record in pubmed if record.pmcid]
    assert pmcids
    assert all(pmcid.startswith("PMC99") and len(pmcid) == 11 for pmcid in pmcids)
    assert all(record.doi for record in pubmed)


def test_pubmed_records_carry_the_shapes_real_records_have() -> None:
    pubmed = [record for record in RECORDS if isinstance(record, PubmedRecord)]
    assert any(record.pub_date.medline_date for record in pubmed)
    assert any(isinstance(author, CollectiveAuthor) for record in pubmed for author in record.authors)
    assert any(len(record.abstract) == 1 and record.abstract[0].label is None for record in pubmed)
    assert any(not record.abstract for record in pubmed), "a title-only record exercises the no-abstract path"
    assert any("<i>" in section.text for record in pubmed for section in record.abstract)
    structured = [record for record in pubmed if len(record.abstract) > 1]
    assert len(structured) >= len(pubmed) * 0.8
    for record in structured:
        labels = [section.label for section in record.abstract]
        assert labels == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"], record.id
    for record in pubmed:
        assert record.authors, record.id
        assert set(record.publication_types) <= set(PUBLICATION_TYPE_UI), record.id
        assert record.pub_date.medline_date or record.pub_date.year


def test_near_duplicates_share_a_doi_and_span_sources() -> None:
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in RECORDS:
        if record.study:
            groups[record.study].append(record)
    assert len(groups) >= 10
    for study, members in groups.items():
        assert len(members) >= 2, study
        assert len({member.kind for member in members}) >= 2, study
        dois = {member.doi for member in members}
        assert len(dois) == 1, study
        assert None not in dois, study
    for topic in TOPICS:
        with_pubmed = [
            members
            for members in groups.values()
            if members[0].topic == topic and any(m.kind == "pubmed" for m in members)
        ]
        assert len(with_pubmed) >= 2, topic


def test_same_page_reached_through_different_url_spellings_is_one_study() -> None:
    by_url: dict[str, list[Record]] = defaultdict(list)
    for record in RECORDS:
        if (url := _url(record)) is not None:
            by_url[normalize_url(url)].append(record)
    variants = [members for members in by_url.values() if len(members) > 1]
    assert len(variants) >= 3
    for members in variants:
        assert len({_url(member) for member in members}) == len(members), "spellings should differ"
        assert len({member.study for member in members}) == 1


def test_prompt_injection_records_are_labelled_and_only_they_inject() -> None:
    injections = [record for record in RECORDS if record.injection_test]
    assert 2 <= len(injections) <= 3
    assert len({record.kind for record in injections}) >= 2
    for record in RECORDS:
        text = f"{record.title} {strip_markup(record.text)}".lower()
        says_ignore = "ignore previous instructions" in text or "ignore all previous instructions" in text
        assert says_ignore == record.injection_test, record.id
    assert all(record.note and "injection" in record.note.lower() for record in injections)


def test_web_snippets_are_short_and_pubmed_abstracts_are_substantial() -> None:
    for record in RECORDS:
        if isinstance(record, WebRecord | SearxngRecord):
            assert 150 <= len(record.text) <= 800, record.id
        elif isinstance(record, YouRecord):
            assert 2 <= len(record.snippets) <= 4, record.id
        elif isinstance(record, ClinicalTrialsRecord):
            assert 100 <= len(record.brief_summary) <= 800, record.id
        elif record.abstract:
            assert len(record.text) >= 600, record.id


# --- BM25 search ---


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("statins sepsis mortality", "statins-sepsis"),
        ("metformin AMPK", MAIN_TOPIC),
        ("SGLT2 inhibitors heart failure hospitalisation", "sglt2-heart-failure"),
        ("vitamin D supplementation depression", "vitamin-d-depression"),
        ("long COVID fatigue post-exertional malaise", "long-covid-fatigue"),
    ],
)
@pytest.mark.parametrize("kind", RECORD_KINDS)
def test_top_hits_belong_to_the_queried_topic(query: str, topic: str, kind: str) -> None:
    top = corpus.search(kind, query, k=2)  # type: ignore[arg-type]
    assert top
    assert all(record.topic == topic for record in top), [record.id for record in top]


def test_different_queries_return_different_records() -> None:
    metformin = {record.id for record in corpus.search("pubmed", "metformin Alzheimer's disease", k=5)}
    statins = {record.id for record in corpus.search("pubmed", "statins sepsis mortality", k=5)}
    assert metformin
    assert statins
    assert not metformin & statins


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tau phosphorylation", "met-pm-01"),
        ("vitamin B12 deficiency neuropathy", "met-pm-10"),
        ("brain insulin resistance", "met-pm-02"),
        ("BACE1 amyloid", "met-pm-03"),
        ("myocardial energetics ketone", "sg-pm-05"),
        ("rhabdomyolysis CYP3A4 interactions", "ss-pm-07"),
    ],
)
def test_mechanism_terms_find_their_record(query: str, expected: str) -> None:
    assert corpus.search("pubmed", query, k=1)[0].id == expected


def test_plurals_fold_to_one_term() -> None:
    assert corpus.search("pubmed", "statins", k=5) == corpus.search("pubmed", "statin", k=5)
    assert corpus._s_stem("inhibitors") == "inhibitor"
    assert corpus._s_stem("deficiencies") == "deficiency"
    assert corpus._s_stem("status") == "status"
    assert corpus._s_stem("stress") == "stress"


def test_single_letter_terms_count() -> None:
    # "vitamin D" must not collapse into "vitamin", which also matches metformin's vitamin B12 records.
    assert all(record.topic == "vitamin-d-depression" for record in corpus.search("web", "vitamin D", k=3))


def test_queries_without_known_terms_find_nothing() -> None:
    assert corpus.search("pubmed", "zzqx quuxfoo") == []
    assert corpus.search("web", "what is the") == []
    assert corpus.search("you", "") == []


def test_search_is_deterministic_and_respects_k() -> None:
    first = corpus.hits("searxng", "metformin dementia")
    assert [hit.record.id for hit in first] == [hit.record.id for hit in corpus.hits("searxng", "metformin dementia")]
    scores = [hit.score for hit in first]
    assert scores == sorted(scores, reverse=True)
    assert len(corpus.search("pubmed", "metformin", k=3)) == 3
    assert corpus.search("pubmed", "metformin", k=0) == []


def test_weak_matches_below_the_relative_floor_are_dropped() -> None:
    results = corpus.hits("pubmed", "metformin alzheimer disease")
    best = results[0].score
    assert all(hit.score >= best * corpus.RELATIVE_FLOOR for hit in results)
    # "disease" alone appears in other topics; they must not trail in behind the metformin records.
    assert all(hit.record.topic == MAIN_TOPIC for hit in results)


@pytest.mark.parametrize(
    "query", ["statins vitamin sepsis", "metformin heart failure safety", "long COVID vitamin D fatigue trial"]
)
@pytest.mark.parametrize("kind", RECORD_KINDS)
def test_every_hit_contains_at_least_half_of_the_query_terms(query: str, kind: str) -> None:
    terms = set(corpus.tokenize([query])[0])
    for hit in corpus.hits(kind, query):  # type: ignore[arg-type]
        present = terms & set(corpus.tokenize([corpus.document_text(hit.record)])[0])
        assert len(present) * 2 >= len(terms), (hit.record.id, present)


def test_american_spellings_find_british_text() -> None:
    assert corpus.search("pubmed", "randomized hospitalization", k=5) == corpus.search(
        "pubmed", "randomised hospitalisation", k=5
    )
    assert corpus.search("pubmed", "brain insulin signaling", k=1)[0].id == "met-pm-02"
    assert corpus.search("pubmed", "pediatric hemoglobin edema tumor") == corpus.search(
        "pubmed", "paediatric haemoglobin oedema tumour"
    )
    assert corpus.fold_spelling("hypoglycaemia") == corpus.fold_spelling("hypoglycemia")


def test_registry_entries_and_preprints_use_synthetic_identifiers() -> None:
    trials = [record for record in RECORDS if isinstance(record, ClinicalTrialsRecord)]
    preprints = [record for record in RECORDS if isinstance(record, EuropePmcRecord)]
    assert trials
    assert preprints
    assert all(record.nct_id.startswith("NCT") and int(record.nct_id[3:]) in DEMO_NCT_RANGE for record in trials)
    assert all(record.ppr_id.startswith(DEMO_PREPRINT_PREFIX) for record in preprints)
    assert all(record.doi and record.doi.startswith(DEMO_DOI_PREFIX) for record in preprints)
    pmids = {record.pmid for record in RECORDS if isinstance(record, PubmedRecord)}
    for trial in trials:
        assert {reference.pmid for reference in trial.references} <= pmids, trial.id


def test_the_main_topic_has_a_retracted_record_and_one_under_an_expression_of_concern() -> None:
    pubmed = [record for record in RECORDS if isinstance(record, PubmedRecord) and record.topic == MAIN_TOPIC]
    retracted = [record for record in pubmed if record.retraction_in]
    concerned = [record for record in pubmed if record.expression_of_concern_in]
    assert len(retracted) == 1
    assert "Retracted Publication" in retracted[0].publication_types
    assert retracted[0].stance == "supports"  # it would read as support if it were not set aside
    assert len(concerned) == 1
    assert all(record.note for record in (*retracted, *concerned))
