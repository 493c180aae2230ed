"""Exports reference managers read: every file is parsed back with the format's own parser (rispy,
bibtexparser, json) and compared with the run's references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rispy
from bibtexparser import parse_string
from bibtexparser.middlewares import LatexDecodingMiddleware
from typer.testing import CliRunner

from deepcritical.cli.app import EXIT_USAGE, app
from deepcritical.models import Citation, Evidence, Grade, Passage, Registration
from deepcritical.outputs import CitationAudit, Finding, ResearchReport
from deepcritical.report.exports import REFERENCE_FORMATS, ReferenceFormat, export, to_bibtex, to_csl_json, to_ris
from deepcritical.run.outcome import LlmUsage, ResearchOutcome
from deepcritical.run.record import write_outputs

TRIAL = Evidence(
    content="Eighty adults were randomised.",
    citation=Citation(
        source="pubmed",
        title="Drug X & β-amyloid in MCI: a 50% {braced} trial_one",
        url="https://pubmed.ncbi.nlm.nih.gov/12345678/",
        date="2021-04-12",
        authors=("Müller AB", "Smith J", "Example Study Group"),
        journal="Journal of Examples",
        doi="10.1000/example.2021.001",
        pmid="12345678",
        pmcid="PMC7654321",
    ),
    grade=Grade(
        design="randomized_controlled_trial", level=2, population="humans", basis="publication_type", sample_size=80
    ),
    expression_of_concern=True,
)
PREPRINT = Evidence(
    content="A cohort.",
    citation=Citation(
        source="europepmc",
        title="Drug X and p-tau217 (preprint)",
        url="https://europepmc.org/article/PPR/PPR123456",
        date="2024-05",
        authors=("Smith J",),
        journal="medRxiv",
        doi="10.1101/2024.05.02.24300001",
    ),
    grade=Grade(design="preprint", population="humans", basis="publication_type"),
)
REGISTRATION = Evidence(
    content="A registered trial.",
    citation=Citation(
        source="clinicaltrials",
        title="Drug X to Prevent Dementia",
        url="https://clinicaltrials.gov/study/NCT01234567",
        date="2021-01-20",
        authors=("Example Consortium",),
        journal="ClinicalTrials.gov",
        nct_id="NCT01234567",
        registration=Registration(status="RECRUITING", phases=("PHASE3",)),
    ),
    grade=Grade(design="registered_trial", population="humans", basis="source", phase="3", sample_size=370),
)
PAGE = Evidence(
    content="A news page.",
    citation=Citation(source="web", title="Drug X in the news", url="https://news.example.org/drug-x"),
    grade=Grade(design="web", basis="source"),
)
SECOND_BY_SMITH = PREPRINT.model_copy(
    update={
        "citation": PREPRINT.citation.model_copy(update={"url": "https://europepmc.org/article/PPR/PPR2", "doi": None})
    }
)
ITEMS = [TRIAL, PREPRINT, REGISTRATION, PAGE]


def test_ris_parses_back_to_the_references() -> None:
    text = to_ris(ITEMS)
    assert text.startswith("TY  - JOUR")  # no numbering line before a record
    records = rispy.loads(text)
    assert [r["type_of_reference"] for r in records] == ["JOUR", "UNPB", "DBASE", "ELEC"]
    trial = records[0]
    assert trial["title"] == TRIAL.citation.title
    assert trial["authors"] == ["Müller, A. B.", "Smith, J.", "Example Study Group"]
    assert (trial["year"], trial["date"]) == ("2021", "2021/04/12")
    assert (trial["doi"], trial["accession_number"], trial["custom2"]) == (
        "10.1000/example.2021.001",
        "12345678",
        "PMC7654321",
    )
    assert trial["urls"] == [TRIAL.citation.url]
    assert trial["secondary_title"] == "Journal of Examples"
    assert trial["keywords"] == ["randomised controlled trial", "OCEBM level 2", "humans", "expression of concern"]
    assert "expression of concern" in trial["notes"][0]
    assert records[2]["keywords"][:2] == ["trial registration (phase 3)", "outside the OCEBM scale"]
    assert "ClinicalTrials.gov NCT01234567" in records[2]["notes"][0]
    assert [r["title"] for r in records] == [item.citation.title for item in ITEMS]


def test_bibtex_parses_back_to_the_references() -> None:
    text = to_bibtex([*ITEMS, SECOND_BY_SMITH])
    library = parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert not library.failed_blocks
    entries = library.entries
    assert [entry.entry_type for entry in entries] == ["article", "misc", "misc", "misc", "misc"]
    keys = [entry.key for entry in entries]
    assert keys[0] == "muller2021drug"
    assert len(set(keys)) == len(keys)  # two items by Smith in 2024 get distinct keys
    trial = {field.key: field.value for field in entries[0].fields}
    assert trial["title"] == TRIAL.citation.title
    assert trial["author"] == "Müller, A. B. and Smith, J. and Example Study Group"
    assert "and {Example Study Group}}" in text  # braced in the file, so BibTeX keeps the group's name whole
    assert (trial["year"], trial["journal"], trial["doi"], trial["pmid"], trial["pmcid"]) == (
        "2021",
        "Journal of Examples",
        "10.1000/example.2021.001",
        "12345678",
        "PMC7654321",
    )
    assert trial["url"] == TRIAL.citation.url
    assert "OCEBM level 2" in trial["keywords"]
    registration = {field.key: field.value for field in entries[2].fields}
    assert registration["howpublished"] == "ClinicalTrials.gov"
    assert [dict((f.key, f.value) for f in e.fields)["title"] for e in entries[:4]] == [i.citation.title for i in ITEMS]


def test_csl_json_parses_back_to_the_references() -> None:
    records = json.loads(to_csl_json(ITEMS))
    assert [r["id"] for r in records] == [item.id for item in ITEMS]
    assert [r["type"] for r in records] == ["article-journal", "article", "report", "webpage"]
    trial = records[0]
    assert trial["author"] == [
        {"family": "Müller", "given": "A. B."},
        {"family": "Smith", "given": "J."},
        {"literal": "Example Study Group"},
    ]
    assert trial["issued"] == {"date-parts": [[2021, 4, 12]]}
    assert (trial["container-title"], trial["DOI"], trial["PMID"], trial["PMCID"], trial["URL"]) == (
        "Journal of Examples",
        "10.1000/example.2021.001",
        "12345678",
        "PMC7654321",
        TRIAL.citation.url,
    )
    assert records[2]["number"] == "NCT01234567"
    assert "issued" not in records[3]  # an undated web page has no date
    assert "randomised controlled trial" in trial["keyword"]


def outcome(items: list[Evidence], references: list[str]) -> ResearchOutcome:
    report = ResearchReport(
        question="Can drug X help?",
        answer_brief="Perhaps.",
        key_findings=[Finding(statement="It helped.", evidence_ids=references)],
        references=references,
    )
    return ResearchOutcome(
        question=report.question,
        run_id="research-test",
        started_at="2026-01-01T00:00:00+00:00",
        demo=False,
        model="test",
        stop_reason="sufficient",
        iterations=1,
        report=report,
        markdown="# Can drug X help?\n",
        report_fallback=False,
        citation_audit=CitationAudit(),
        evidence=items,
        assessments=[],
        plans=[],
        searches=[],
        timings={"total": 1.0},
        llm_usage=LlmUsage(),
        errors=[],
        settings={},
    )


def test_a_run_writes_its_references_beside_the_report(tmp_path: Path) -> None:
    report_path, run_path = write_outputs(outcome(ITEMS, [REGISTRATION.id, TRIAL.id]), tmp_path / "out")
    folder = report_path.parent
    assert run_path.parent == folder
    assert [r["title"] for r in rispy.loads((folder / "references.ris").read_text(encoding="utf-8"))] == [
        REGISTRATION.citation.title,
        TRIAL.citation.title,
    ]
    bib = parse_string((folder / "references.bib").read_text(encoding="utf-8"))
    assert len(bib.entries) == 2
    csl = json.loads((folder / "references.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in csl] == [REGISTRATION.id, TRIAL.id]
    recorded = json.loads(run_path.read_text(encoding="utf-8"))
    assert recorded["evidence"][0]["grade"]["design"] == "randomized_controlled_trial"
    assert recorded["evidence"][0]["expression_of_concern"] is True


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    write_outputs(outcome(ITEMS, [TRIAL.id, PAGE.id]), tmp_path / "run")
    return tmp_path / "run"


@pytest.mark.parametrize(("form", "marker"), [("ris", "TY  - JOUR"), ("bibtex", "@article{"), ("csljson", '"type"')])
def test_the_export_command_prints_each_format(run_dir: Path, form: str, marker: str) -> None:
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", form])
    assert result.exit_code == 0, result.output
    assert marker in result.stdout
    assert TRIAL.citation.pmid in result.stdout
    assert PREPRINT.citation.url not in result.stdout  # not among the references


def test_the_export_command_writes_a_file_and_can_take_every_item(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "all.json"
    result = CliRunner().invoke(app, ["export", str(run_dir / "run.json"), "-f", "csljson", "--all", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in json.loads(target.read_text(encoding="utf-8"))] == [item.id for item in ITEMS]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "unknown export format 'xml'"),
        (["--format", "ris", "--output", "/nonexistent-dir/x.ris"], "cannot write"),
    ],
)
def test_bad_export_options_exit_2_with_one_line(run_dir: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["export", str(run_dir), *args])
    assert result.exit_code == EXIT_USAGE
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no run record at"), ("{not json", "is not JSON"), ('{"report": {}}', "has no 'evidence' list")],
)
def test_a_bad_run_directory_exits_2_with_one_line(tmp_path: Path, content: str | None, message: str) -> None:
    if content is not None:
        (tmp_path / "run.json").write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["export", str(tmp_path), "-f", "ris"])
    assert result.exit_code == EXIT_USAGE
    assert message in result.output


@pytest.mark.parametrize("form", REFERENCE_FORMATS)
def test_a_synthetic_record_or_a_local_passage_is_exported_without_a_link(form: ReferenceFormat) -> None:
    passage = TRIAL.model_copy(
        update={
            "citation": TRIAL.citation.model_copy(update={"url": "library://documents/pmid:12345678/4"}),
            "passage": Passage(collection="documents", document_id="pmid:12345678", passage_id="4", section="Results"),
        }
    )
    real = export([TRIAL, passage], form)
    assert TRIAL.citation.url in real
    assert "library://" not in real
    demo = export([TRIAL], form, synthetic=True)
    assert TRIAL.citation.url not in demo
    assert "SYNTHETIC DEMO RECORD" in demo


def test_a_line_break_in_a_records_text_cannot_start_another_ris_record() -> None:
    """RIS is one tag a line: a title from a registry or a search engine that holds a line break ("...\\nER  -
    \\nTY  - JOUR\\nTI  - Injected") ended its record in `references.ris` and began a forged one, which a
    reference manager imports as a second reference. Each value is written on its one line."""
    forged = "\nER  - \n\nTY  - JOUR\nTI  - Injected record"
    citation = Citation(
        source="clinicaltrials", title=f"Statins in sepsis{forged}", url="https://clinicaltrials.gov/study/NCT01",
        authors=[f"Doe J{forged}"], journal=f"Registry{forged}",
    )  # fmt: skip
    item = Evidence(content="x", citation=citation, grade=Grade(design="registered_trial"))
    (record,) = rispy.loads(to_ris([item]))
    assert record["title"] == "Statins in sepsis ER - TY - JOUR TI - Injected record"
    assert record["authors"] == ["Doe J ER - TY - JOUR TI - Injected record"]
    assert "Injected" not in to_ris([item]).split("\nER  - ")[1]  # nothing after the one record's end
