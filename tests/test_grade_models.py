"""Grades and flags on Evidence: defaults that keep old records valid, labels, and what a merge keeps."""

from __future__ import annotations

from deepcritical.models import Citation, Evidence, Grade, Registration, identity_keys


def item(source: str = "pubmed", **fields: object) -> Evidence:
    citation = Citation(
        source=source,  # type: ignore[arg-type]
        title="A study",
        url="https://pubmed.ncbi.nlm.nih.gov/1/" if source == "pubmed" else "https://example.org/page",
        pmid="1" if source == "pubmed" else None,
    )
    return Evidence(content="Text.", citation=citation, **fields)  # type: ignore[arg-type]


def test_an_item_without_a_grade_is_ungraded_and_not_retracted() -> None:
    plain = item()
    assert plain.grade == Grade()
    assert (plain.grade.design, plain.grade.basis, plain.retracted, plain.expression_of_concern) == (
        "unknown",
        None,
        False,
        False,
    )
    # A record written before grades existed still loads.
    old = '{"content": "Text.", "citation": {"source": "pubmed", "title": "T", "url": "https://x.org/1"}}'
    assert Evidence.model_validate_json(old).grade == Grade()


def test_labels_read_as_a_clinician_would_say_them() -> None:
    assert Grade(design="cohort", population="humans", sample_size=145212).label == "cohort study, humans, n = 145,212"
    assert Grade(design="preclinical", population="animals").label == "preclinical study, animals"
    assert Grade(design="clinical_trial", phase="1").label == "non-randomised clinical trial (phase 1)"
    assert Grade(design="cohort", phase="2").label == "cohort study"  # a phase belongs to trials only


def test_a_merge_keeps_the_firmer_grade_and_any_retraction() -> None:
    from_types = Grade(design="randomized_controlled_trial", level=2, basis="publication_type")
    from_source = Grade(design="registered_trial", basis="source", phase="3", sample_size=370)
    paper = item(grade=from_types)
    registry = item("clinicaltrials", grade=from_source, retracted=False, expression_of_concern=True)
    merged = registry.merged_with(paper)
    assert merged.grade.design == "randomized_controlled_trial"
    assert (merged.grade.phase, merged.grade.sample_size) == ("3", 370)  # filled from the other grade
    assert merged.expression_of_concern
    assert paper.model_copy(update={"retracted": True}).merged_with(registry).retracted
    assert registry.merged_with(paper.model_copy(update={"retracted": True})).retracted


def test_a_registry_entry_is_identified_by_its_first_results_publication() -> None:
    registration = Registration(result_pmids=("22", "33"), other_pmids=("11",))
    citation = Citation(
        source="clinicaltrials",
        title="A trial",
        url="https://clinicaltrials.gov/study/NCT01234567",
        nct_id="NCT01234567",
        registration=registration,
    )
    assert identity_keys(citation) == {"url:https://clinicaltrials.gov/study/NCT01234567", "pmid:22"}
    assert Evidence(content="x", citation=citation).id == "url:https://clinicaltrials.gov/study/NCT01234567"
