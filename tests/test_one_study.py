"""Issue 23, item 3: one study, one reading. An article's abstract and its full-text passages are one study:
one row in the counted table, one reference (its passages listed under it), one reading; a methods or
introduction passage, a background sentence or a speculation never states the study's result."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import direction, labelled_sentences, quote
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.appraisal.studies import group_studies, readable, studies_of, study_numbers, with_study_parts
from deepcritical.cli.app import app
from deepcritical.models import Citation, Evidence, Grade, Passage
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.questions import stem
from deepcritical.report.render import RenderContext, render_markdown

QUESTION = "Does aspirin prevent stroke in older adults?"
STEMS = [stem(word) for word in ("aspirin", "stroke", "older", "adults")]
ABSTRACT = (
    "BACKGROUND: Aspirin may contribute to fewer strokes through platelet inhibition, the rationale for this trial. "
    "METHODS: We randomised 19,114 older adults to aspirin or placebo and followed them for stroke. "
    "RESULTS: Aspirin did not reduce stroke in older adults (HR 0.95, 95% CI 0.83 to 1.08)."
)
GRADE = Grade(design="randomized_controlled_trial", level=2, population="humans", sample_size=19114)


def abstract() -> Evidence:
    citation = Citation(
        source="pubmed",
        title="Aspirin in older adults",
        url="https://pubmed.ncbi.nlm.nih.gov/30221597/",
        pmid="30221597",
    )
    return Evidence(content=ABSTRACT, citation=citation, grade=GRADE)


def passage(number: str, section: str, text: str, *, pmid: str | None = "30221597") -> Evidence:
    # The library's record of a document: its own id (the file's), with the article's PMID when it has one.
    where = Passage(collection="documents", document_id="aspirin-paper.pdf", passage_id=number, section=section)
    citation = Citation(
        source="library",
        title=f"Aspirin in older adults ({section})",
        url=f"library://documents/aspirin-paper.pdf/{number}",
        pmid=pmid,
    )
    return Evidence(content=text, citation=citation, passage=where, grade=GRADE)


METHODS = passage("3", "Methods", "Older adults were randomised to aspirin or placebo and followed for stroke.")
RESULTS = passage("6", "Results", "Stroke occurred in 1.1% with aspirin and 1.2% with placebo (HR 0.95; 0.83-1.08).")
DISCUSSION = passage("8", "Discussion", "Aspirin did not prevent stroke in these older adults.")


def test_an_abstract_and_its_passages_are_one_study_whatever_the_documents_id() -> None:
    items = [RESULTS, abstract(), METHODS]
    groups = group_studies(items)
    assert [[item.id for item in group] for group in groups] == [[RESULTS.id, "pmid:30221597", METHODS.id]]
    assert set(study_numbers(groups).values()) == {1}
    assert {EvidenceView.of(item).document for item in items} == {"pmid:30221597"}
    # A passage of a document with no PMID or DOI is its document's study, not the abstract's.
    other = passage("2", "Results", "Stroke was rarer.", pmid=None)
    assert len(group_studies([abstract(), other])) == 2


def test_each_study_is_one_reading_unit_for_the_verdict() -> None:
    units = studies_of([METHODS, DISCUSSION, abstract(), RESULTS, passage("2", "Results", "Other.", pmid="1")])
    assert [unit.key for unit in units] == ["pmid:30221597", "pmid:1"]
    first = units[0]
    assert first.lead.id == "pmid:30221597"
    assert [item.id for item in first.parts] == ["pmid:30221597", RESULTS.id, DISCUSSION.id]
    assert set(first.ids) == {METHODS.id, DISCUSSION.id, "pmid:30221597", RESULTS.id}
    assert studies_of([METHODS])[0].parts == (METHODS,)  # what there is of it


def test_a_study_is_read_by_its_abstract_and_results_never_its_methods_alone() -> None:
    group = [DISCUSSION, METHODS, RESULTS, abstract()]
    assert [item.id for item in readable(group)] == ["pmid:30221597"]
    assert [item.id for item in readable([DISCUSSION, METHODS, RESULTS])] == [RESULTS.id]
    assert readable([METHODS]) == [METHODS]  # all there is of the study
    collected = {item.id: item for item in (abstract(), METHODS, RESULTS)}
    # The report reads a study by its abstract and its Results passage (a result may be stated there).
    assert [item.id for item in with_study_parts([METHODS], collected)] == ["pmid:30221597", RESULTS.id]


def test_background_methods_and_speculation_never_state_the_result() -> None:
    kept = [sentence for sentence, _ in labelled_sentences(ABSTRACT, results_only=True)]
    assert kept == ["Aspirin did not reduce stroke in older adults (HR 0.95, 95% CI 0.83 to 1.08)."]
    view = EvidenceView.of(abstract())
    found = quote(view, STEMS)
    assert found is not None
    assert found.sentence == kept[0]
    assert direction(view, STEMS) == "null"
    for text in (
        "These effects may contribute to the early reduction in stroke events with aspirin in older adults.",
        "The anti-platelet effect of aspirin in older adults is the main rationale for testing it against stroke.",
        "We pooled five randomised trials of aspirin for stroke prevention in older adults with worsening frailty.",
    ):
        speculative = EvidenceView.of(abstract().model_copy(update={"content": text}))
        assert quote(speculative, STEMS) is None, text
        assert direction(speculative, STEMS) is None


def test_a_study_has_one_reference_listing_its_passages_and_one_row_in_the_table() -> None:
    items = {item.id: item for item in (abstract(), RESULTS, METHODS)}
    report = ResearchReport(
        question=QUESTION,
        answer_brief="Aspirin did not prevent stroke (pmid:30221597).",
        key_findings=[Finding(statement="Stroke was as frequent.", evidence_ids=[RESULTS.id, "pmid:30221597"])],
        references=[RESULTS.id, "pmid:30221597"],
    )
    markdown = render_markdown(report, items, RenderContext(demo=False, stop_reason="sufficient"))
    references = markdown.split("## References")[1].strip().splitlines()
    assert len(references) == 1
    assert references[0].startswith("1. ")
    assert "Evidence id: `pmid:30221597`" in references[0]
    assert f"Passages used: Results ({'`' + RESULTS.id + '`'})" in references[0]
    assert "Stroke was as frequent. \\[1, Results\\]" in markdown  # the study once: its passage names it
    assert "Aspirin did not prevent stroke \\[1\\]" in markdown
    table = markdown.split("## Strength of evidence")[1].split("##")[0]
    assert "| Randomised controlled trials | 2 | 0 | 1 \\[1\\] | 0 | 0 |" in table
    counted = counted_items(QUESTION, items, [METHODS.id])  # a pool that held the methods passage only
    # Counted once, by the part that states its result (its Results passage, cited with its section).
    assert counted.counted == [RESULTS.id]
    assert "pmid:30221597" in counted.same_study
    assert METHODS.id not in counted.counted


DEMO_QUESTIONS = {
    "sglt2": "Do SGLT2 inhibitors improve outcomes in heart failure?",
    "metformin": "Can metformin be repurposed for Alzheimer's disease?",
}


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict[str, object]]]:
    """The demo's own corpus, run end to end once per question (no network)."""
    home = tmp_path_factory.mktemp("home")
    runs: dict[str, tuple[str, dict[str, object]]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEEPCRITICAL_HOME", str(home))
        for variable in ("DEEPCRITICAL_SOURCES", "CHROMA_HOST", "SEARXNG_BASE_URL", "YOU_API_KEY"):
            patch.delenv(variable, raising=False)
        for name, question in DEMO_QUESTIONS.items():
            out = home / name
            result = CliRunner().invoke(app, ["research", question, "--demo", "--out", str(out), "--quiet"])
            assert result.exit_code == 0, result.output
            record = json.loads((out / "run.json").read_text(encoding="utf-8"))
            runs[name] = ((out / "report.md").read_text(encoding="utf-8"), record)
    return runs


def _studies_listed(markdown: str) -> list[str]:
    """The PMID of every reference (an abstract's id, or the document a passage cites), in order."""
    references = markdown.split("## References")[1]
    return re.findall(r"^\d+\. .*?Evidence id: `(?:pmid:|url:library://documents/pmid:)(\d+)", references, re.M)


@pytest.mark.model
def test_the_sglt2_meta_analysis_is_one_reference_and_counts_by_its_results(
    demo_runs: dict[str, tuple[str, dict[str, object]]],
) -> None:
    markdown, _ = demo_runs["sglt2"]
    listed = _studies_listed(markdown)
    assert listed.count("99000403") == 1, listed
    assert len(listed) == len(set(listed))  # no study is listed twice
    table = markdown.split("## Strength of evidence")[1].split("##")[0]
    meta = re.search(r"^\| Systematic reviews and meta-analyses \| 1 \| (\d+)", table, re.M)
    assert meta is not None
    assert int(meta.group(1)) >= 1  # its HR 0.77 reads favourable
    assert "may contribute to the early reduction" not in markdown  # speculation is no finding
    assert "We pooled five randomised trials" not in markdown  # nor a methods sentence


@pytest.mark.model
def test_the_metformin_meta_analysis_is_not_counted_by_its_methods_passage(
    demo_runs: dict[str, tuple[str, dict[str, object]]],
) -> None:
    markdown, record = demo_runs["metformin"]
    evidence = {item["id"]: item for item in record["evidence"]}  # type: ignore[attr-defined]
    table = markdown.split("## Strength of evidence")[1].split("##")[0]
    numbers = {int(n) for n in re.findall(r"\d+", " ".join(re.findall(r"\\\[([\d, ]+)\\\]", table)))}
    references = markdown.split("## References")[1]
    for number in numbers:
        line = re.search(rf"^{number}\. .*$", references, re.M)
        assert line is not None
        assert "Passage: Methods" not in line.group(0)
        assert "Passage: Introduction" not in line.group(0)
    meta = re.search(r"^\| Systematic reviews and meta-analyses \| 3 \| 0 \| 1 \\\[(\d+)\\\]", table, re.M)
    assert meta is not None  # null once immortal-time bias is excluded
    # Its null result is contrary evidence (from its abstract, or its Results passage: RR 0.92, 0.77 to 1.10).
    assert re.search(rf"\\\[{meta.group(1)}\b", markdown.split("## Contrary evidence")[1].split("##")[0])
    assert len(_studies_listed(markdown)) == len(set(_studies_listed(markdown)))
    assert evidence


def test_the_counted_table_reads_a_library_trial_by_the_passage_on_the_question_s_outcome() -> None:
    # A trial known by its full text alone (phases/22_library_trials.md): the first Results passages collected
    # report other outcomes; the one on the question's outcome is the third. The counted table read only the first
    # two, and said "no clear result" of a trial that states a significant reduction in pain.
    question = "Does ketorolac change pain compared with placebo?"
    grade = Grade(design="randomized_controlled_trial", level=2, population="humans", sample_size=120)

    def part(number: str, section: str, text: str) -> Evidence:
        where = Passage(collection="documents", document_id="file:ketorolac", passage_id=number, section=section)
        citation = Citation(
            source="library",
            title=f"Ketorolac after tonsillectomy: a randomised trial ({section})",
            url=f"library://documents/file:ketorolac/{number}",
        )
        return Evidence(content=text, citation=citation, passage=where, grade=grade)

    passages = [
        part("4", "Methods", "Children were randomised to ketorolac or placebo; pain was scored at 6 hours."),
        part("7", "Results", "Baseline characteristics of the ketorolac and placebo groups were similar (Table 1)."),
        part(
            "8", "Results", "Bleeding occurred in 3 of 60 children with ketorolac and 2 of 60 with placebo (p = 0.65)."
        ),
        part("9", "Results", "Pain at 6 hours was significantly lower with ketorolac than with placebo (p < 0.001)."),
    ]
    evidence = {item.id: item for item in passages}
    counted = counted_items(question, evidence, [passages[0].id])
    assert counted.counted == [passages[3].id]
    assert counted.directions[passages[3].id] == "favourable"
