"""An open question ("Which drugs reduce mortality in sepsis?") is answered by the candidate interventions its
counted studies tested, each with its studies' readings for the question's outcome, never by yes or no."""

from __future__ import annotations

from deepcritical.reading.drug_classes import class_named, member_of
from deepcritical.stages.candidates import intervention_of, open_block, open_verdict
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.markdown_writer import blocks_markdown
from deepcritical.stages.strength import strength_of
from deepcritical.stages.verdict import counted_verdict

QUESTION = "Which drugs reduce mortality in sepsis?"


def view(pmid: str, title: str, text: str, design: str, level: int, n: int) -> EvidenceView:
    return EvidenceView(
        id=f"pmid:{pmid}",
        title=title,
        source="pubmed",
        date="2020",
        text=text,
        design=design,
        level=level,
        population="humans",
        n=n,
        document=f"pmid:{pmid}",
    )


META = view(
    "1",
    "Statins for the treatment of sepsis: a systematic review and meta-analysis",
    "RESULTS: Nine trials of statins in sepsis showed no effect on 28-day mortality (RR 0.98, 95% CI 0.84 to 1.14).",
    "meta_analysis",
    1,
    2275,
)
COHORT = view(
    "2",
    "Pre-admission statin use and 30-day mortality in patients with sepsis: a cohort study",
    "RESULTS: Current statin use in sepsis was associated with lower 30-day mortality (HR 0.82, 95% CI 0.77 to 0.87).",
    "cohort",
    3,
    53926,
)
TRIAL = view(
    "3",
    "Hydrocortisone for septic shock: a randomised trial",
    "RESULTS: In sepsis, 90-day mortality was 27.9% with hydrocortisone and 28.8% with placebo (p=0.50).",
    "randomized_controlled_trial",
    2,
    3800,
)
MUSCLE = view(
    "4",
    "Statin-associated muscle injury in patients with sepsis",
    "RESULTS: In sepsis, creatine kinase above 10 times normal occurred in 3.1% of statin users and 0.9% of "
    "non-users (OR 2.9, 95% CI 2.3 to 3.7).",
    "cohort",
    3,
    18824,
)


def test_a_study_is_named_by_the_intervention_its_title_names() -> None:
    assert intervention_of(TRIAL) == "Hydrocortisone"
    assert intervention_of(COHORT) == "Pre-admission statin use"
    assert intervention_of(META) == "Statins"


def test_the_candidates_are_the_interventions_with_their_readings_for_the_outcome() -> None:
    counted = strength_of(QUESTION, [META, COHORT, TRIAL, MUSCLE])
    verdict = counted_verdict(QUESTION, counted)
    assert verdict == open_verdict(QUESTION, counted)
    assert verdict.label == "open"
    by_name = {candidate.intervention: candidate for candidate in verdict.candidates}
    # "Statins" and "pre-admission statin use" are one candidate; the strongest design first.
    assert list(by_name) == ["Statins", "Hydrocortisone"]
    statins = by_name["Statins"]
    assert statins.null == ["pmid:1"]
    assert statins.favourable == ["pmid:2"]
    assert statins.strongest_level == 1
    assert by_name["Hydrocortisone"].null == ["pmid:3"]
    # The muscle-injury study reports another outcome: it is no candidate's reading for mortality.
    assert "pmid:4" not in verdict.evidence_ids
    lines = blocks_markdown(open_block(verdict, {"pmid:1": 1, "pmid:2": 2, "pmid:3": 3, "pmid:4": 4})).splitlines()
    assert "| Statins | 1 \\[2\\] | 1 \\[1\\] | 0 | meta-analysis, OCEBM level 1 |" in lines
    assert "| Hydrocortisone | 0 | 1 \\[3\\] | 0 | randomised controlled trial, OCEBM level 2 |" in lines
    assert verdict.headline.startswith("open question, no yes or no; candidate interventions: Statins: 1 favourable")


ROSUVASTATIN = view(
    "5",
    "Rosuvastatin for sepsis-associated acute respiratory distress syndrome: a randomised trial",
    "RESULTS: Sixty-day mortality in sepsis was 28.5% with rosuvastatin and 24.9% with placebo (p=0.21).",
    "randomized_controlled_trial",
    2,
    745,
)
ATORVASTATIN = view(
    "6",
    "Atorvastatin to prevent progression of sepsis: a randomised controlled trial",
    "RESULTS: In sepsis, 28-day mortality did not differ between atorvastatin and placebo (p=0.47).",
    "randomized_controlled_trial",
    2,
    100,
)


def test_a_drug_belongs_to_its_class_by_its_inn_stem_only() -> None:
    found = member_of("Rosuvastatin for sepsis")
    assert found is not None
    assert (found[0].name, found[1]) == ("statins", "Rosuvastatin")
    assert member_of("dapagliflozin")[0].name == "SGLT2 inhibitors"  # type: ignore[index]
    assert member_of("omeprazole")[0].name == "proton pump inhibitors"  # type: ignore[index]
    # Ends in -statin, but no statin: the statins' INN stem is -vastatin.
    assert member_of("nystatin") is None
    assert member_of("somatostatin") is None
    assert member_of("statin use") is None  # the stem alone names the class, not a member
    assert member_of("April") is None  # a stem needs a prefix ("-pril")
    assert class_named("Pre-admission statin use").name == "statins"  # type: ignore[union-attr]
    assert class_named("SGLT-2 inhibitors and outcomes").name == "SGLT2 inhibitors"  # type: ignore[union-attr]
    assert class_named("Nystatin prophylaxis") is None


def test_a_class_and_its_members_are_one_candidate_with_each_members_studies_listed() -> None:
    counted = strength_of(QUESTION, [META, COHORT, TRIAL, ROSUVASTATIN, ATORVASTATIN])
    verdict = open_verdict(QUESTION, counted)
    by_name = {candidate.intervention: candidate for candidate in verdict.candidates}
    assert list(by_name) == ["Statins", "Hydrocortisone"]  # not "Rosuvastatin" and "Atorvastatin" apart
    statins = by_name["Statins"]
    assert sorted(statins.null) == ["pmid:1", "pmid:5", "pmid:6"]
    assert statins.favourable == ["pmid:2"]
    assert [(m.name, m.ids) for m in statins.members] == [("rosuvastatin", ["pmid:5"]), ("atorvastatin", ["pmid:6"])]
    assert by_name["Hydrocortisone"].members == []
    numbers = {f"pmid:{n}": n for n in range(1, 7)}
    lines = blocks_markdown(open_block(verdict, numbers)).splitlines()
    row = next(line for line in lines if line.startswith("| Statins"))
    assert row.startswith("| Statins (rosuvastatin \\[5\\]; atorvastatin \\[6\\]) | 1 \\[2\\] | 3 \\[")
    assert verdict.headline.startswith("open question, no yes or no; candidate interventions: Statins (of which rosu")


def test_members_alone_are_listed_under_their_class() -> None:
    counted = strength_of(QUESTION, [ROSUVASTATIN, ATORVASTATIN, TRIAL])
    verdict = open_verdict(QUESTION, counted)
    assert [c.intervention for c in verdict.candidates] == ["statins", "Hydrocortisone"]
    assert [m.name for m in verdict.candidates[0].members] == ["rosuvastatin", "atorvastatin"]


def test_a_drug_a_study_lists_under_another_candidate_joins_it() -> None:
    """No mapping knows corticosteroids: the meta-analysis's text says hydrocortisone is one."""
    steroids = view(
        "7",
        "Corticosteroids for sepsis: a systematic review and meta-analysis",
        "RESULTS: Corticosteroids such as hydrocortisone or methylprednisolone did not reduce 28-day mortality in "
        "sepsis (RR 0.98, 95% CI 0.89 to 1.08).",
        "meta_analysis",
        1,
        12000,
    )
    alone = open_verdict(QUESTION, strength_of(QUESTION, [TRIAL]))
    assert [c.intervention for c in alone.candidates] == ["Hydrocortisone"]
    verdict = open_verdict(QUESTION, strength_of(QUESTION, [steroids, TRIAL]))
    assert [c.intervention for c in verdict.candidates] == ["Corticosteroids"]
    assert sorted(verdict.candidates[0].null) == ["pmid:3", "pmid:7"]
    assert [(m.name, m.ids) for m in verdict.candidates[0].members] == [("hydrocortisone", ["pmid:3"])]
