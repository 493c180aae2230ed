"""A clinician's own trials read through the run (phases/22_library_trials.md, bench/library_trials.py): a trial in
the library is many passages of one article, and the counted table must read it as the result reader reads the
whole article. Small hand-written articles; each case failed before its fix."""

from __future__ import annotations

from dataclasses import replace

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.appraisal.strength import strength_of
from deepcritical.documents.reader import Limits, read_bytes
from deepcritical.evidence.document_files import passage_items
from deepcritical.models import Grade
from helpers.builders import THALIDOMIDE_RESULTS as LIBRARY_RESULTS

TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", sample_size=644)
# A PMC article as `library add` reads it: a structured abstract, its labels as JATS sections.
JATS = b"""<?xml version="1.0" encoding="UTF-8"?>
<article article-type="research-article"><front><article-meta>
<title-group><article-title>Exercise and orientation for older inpatients: a randomised trial</article-title>
</title-group>
<abstract>
<sec><title>Objective</title><p>To determine whether a programme of mobilisation and orientation, in addition to
usual care, was superior to usual care alone in the prevention of delirium in older hospitalised patients.</p></sec>
<sec><title>Results</title><p>Delirium occurred in 4.9% of the intervention group and in 5.9% of the usual care
group, a difference that was not statistically significant (p = 0.57).</p></sec>
</abstract></article-meta></front>
<body><sec><title>Introduction</title><p>Delirium is common in older inpatients.</p></sec></body></article>
"""
QUESTION = "Does mobilisation and orientation change delirium compared with usual care?"


def test_a_library_abstract_s_objective_is_not_read_as_its_result() -> None:
    document = read_bytes(JATS, suffix=".nxml", limits=Limits())[0]
    items = passage_items("mine", document, TRIAL)
    objective = next(item for item in items if "To determine" in item.content)
    assert objective.passage is not None
    assert objective.passage.subsection == "Objective"
    assert EvidenceView.of(objective).states_no_result
    results = next(item for item in items if "Delirium occurred" in item.content)
    assert not EvidenceView.of(results).states_no_result
    # The objective came first, read as "superior ... in the prevention of delirium": unfavourable. The study is
    # read by its abstract's Results: no difference, as the doctors read it.
    counted = counted_items(QUESTION, {item.id: item for item in items}, [objective.id])
    assert counted.counted == [results.id]
    assert counted.directions[results.id] == "null"


def _results(number: int, text: str) -> EvidenceView:
    title = "Carbetocin versus oxytocin at caesarean section: a randomised trial"
    return replace(LIBRARY_RESULTS, id=f"file:cb#{number}", title=title, text=text, document="file:cb")


def test_a_study_is_read_by_its_passage_that_most_surely_states_the_result() -> None:
    # Both Results passages name the outcome and read a result; the first collected reads a subgroup's. The result
    # reader, given the whole article, relies on the second's sentence; the table read the first in order.
    question = "Does carbetocin change the need for additional uterotonics compared with oxytocin?"
    subgroup = _results(
        5,
        "Uterine tone was similar with carbetocin and oxytocin at 5 minutes, and the need for additional uterotonics "
        "did not differ among the subgroups of women with one or more previous caesareans (p = 0.41).",
    )
    main = _results(
        6,
        "The need for additional uterotonics was significantly lower with carbetocin than with oxytocin (3.1% vs 7.2%; "
        "relative risk 0.41, 95% CI 0.19 to 0.85; p = 0.011).",
    )
    counted = strength_of(question, [subgroup, main])
    assert counted.counted == [main.id]
    assert counted.directions[main.id] == "favourable"


def test_an_abstract_s_methods_and_results_label_holds_its_results() -> None:
    """Circulation's and the European Heart Journal's abstracts label their results "Methods and Results", PLOS
    Medicine's "Methods and Findings": such a passage states the study's result (it was set aside as methods)."""
    labelled = JATS.replace(b"<title>Results</title>", b"<title>Methods and Results</title>")
    document = read_bytes(labelled, suffix=".nxml", limits=Limits())[0]
    results = next(item for item in passage_items("mine", document, TRIAL) if "Delirium occurred" in item.content)
    assert results.passage is not None
    assert results.passage.subsection == "Methods and Results"
    assert not EvidenceView.of(results).states_no_result
    findings = replace(EvidenceView.of(results), subsection="Methods and Findings")
    assert not findings.states_no_result
    assert replace(findings, subsection="Methods").states_no_result
