"""An open question ("Which drugs reduce mortality in sepsis?") is answered by the candidate interventions its
counted studies tested, each with its studies' readings for the question's outcome, never by yes or no."""

from __future__ import annotations

from dataclasses import replace

from deepcritical.appraisal.candidates import intervention_of, open_verdict
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.verdict import counted_verdict
from deepcritical.reading.drug_classes import class_named, member_of
from deepcritical.report.candidates import open_block
from deepcritical.report.markdown_writer import blocks_markdown
from helpers.builders import evidence_view

QUESTION = "Which drugs reduce mortality in sepsis?"


META = evidence_view(
    "1",
    "Statins for the treatment of sepsis: a systematic review and meta-analysis",
    "RESULTS: Nine trials of statins in sepsis showed no effect on 28-day mortality (RR 0.98, 95% CI 0.84 to 1.14).",
    "meta_analysis",
    1,
    2275,
)
COHORT = evidence_view(
    "2",
    "Pre-admission statin use and 30-day mortality in patients with sepsis: a cohort study",
    "RESULTS: Current statin use in sepsis was associated with lower 30-day mortality (HR 0.82, 95% CI 0.77 to 0.87).",
    "cohort",
    3,
    53926,
)
TRIAL = evidence_view(
    "3",
    "Hydrocortisone for septic shock: a randomised trial",
    "RESULTS: In sepsis, 90-day mortality was 27.9% with hydrocortisone and 28.8% with placebo (p=0.50).",
    "randomized_controlled_trial",
    2,
    3800,
)
MUSCLE = evidence_view(
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


ROSUVASTATIN = evidence_view(
    "5",
    "Rosuvastatin for sepsis-associated acute respiratory distress syndrome: a randomised trial",
    "RESULTS: Sixty-day mortality in sepsis was 28.5% with rosuvastatin and 24.9% with placebo (p=0.21).",
    "randomized_controlled_trial",
    2,
    745,
)
ATORVASTATIN = evidence_view(
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
    steroids = evidence_view(
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


def titled(title: str, design: str) -> EvidenceView:
    return evidence_view("9", title, "", design, 3, 100)


def test_a_title_names_a_candidate_only_when_its_subject_is_an_intervention() -> None:
    """Issue 23 (a new user's long COVID question): a mechanism, a biomarker finding or a harm named first in a
    title was listed as a favourable "intervention"."""
    refused = [
        ("Reduced circulating serotonin after SARS-CoV-2 infection is associated with persistent fatigue", "cohort"),
        ("Mitochondrial dysfunction in circulating immune cells of people with long COVID fatigue", "preprint"),
        ("Symptom exacerbation after graded exercise therapy in people with long COVID", "cross_sectional"),
        ("Serum vitamin D levels and depression: a meta-analysis", "meta_analysis"),
        ("Statin-associated muscle injury in patients with sepsis", "cohort"),
        ("Biomarkers for predicting sepsis mortality: a cohort study", "cohort"),
    ]
    for title, design in refused:
        assert intervention_of(titled(title, design)) is None, title
    named = [
        ("Nirmatrelvir-ritonavir for post-COVID fatigue: a randomised trial", "randomized_controlled_trial"),
        ("Low-dose naltrexone for long COVID fatigue: a pilot study", "cohort"),  # "X for Y"
        ("Effect of long-term vitamin D3 supplementation on depression", "cohort"),  # "effect of X"
        ("Pacing and graded exercise in long COVID: a cohort", "cohort"),  # a treatment's name
        ("SGLT2 inhibitors and heart failure hospitalisation: a cohort study", "cohort"),  # a drug class
        ("Dapagliflozin and outcomes in heart failure: a cohort", "cohort"),  # an INN stem
    ]
    for title, design in named:
        assert intervention_of(titled(title, design)) is not None, title
    assert intervention_of(titled("Low-dose naltrexone for long COVID fatigue", "cohort")) == "Low-dose naltrexone"
    # A measure is no treatment, though its words may be one's ("exercise capacity").
    assert intervention_of(titled("Exercise capacity in heart failure: a cohort", "cohort")) is None


def test_a_trial_whose_title_opens_on_what_it_measured_is_named_by_what_it_tested() -> None:
    natriuresis = titled(
        "Natriuresis and plasma volume with empagliflozin in chronic heart failure: a mechanistic randomised trial",
        "randomized_controlled_trial",
    )
    assert intervention_of(natriuresis) == "empagliflozin"  # the drug its title names
    training = evidence_view(
        "10",
        "Exercise capacity in heart failure: a randomised trial",
        "METHODS: 200 patients were randomised to supervised aerobic training 3 times weekly or usual care.",
        "randomized_controlled_trial",
        2,
        200,
    )
    assert intervention_of(training) == "supervised aerobic training"  # the arm it randomised people to
    either = replace(training, text="METHODS: Patients were randomised to either aerobic training or usual care.")
    assert intervention_of(either) == "aerobic training"  # "either" is no part of the arm's name
    # A review of randomised trials reviews an intervention; one of cohorts that calls for trials does not.
    of_trials = evidence_view(
        "11",
        "Vitamin D and depressive symptoms: a meta-analysis",
        "We pooled 41 randomised controlled trials.",
        "meta_analysis",
        1,
        5000,
    )
    of_cohorts = evidence_view(
        "12",
        "Serum vitamin D and depression: a meta-analysis",
        "We pooled 20 cohort studies. Randomised controlled trials are needed.",
        "meta_analysis",
        1,
        5000,
    )
    assert intervention_of(of_trials) == "Vitamin D"
    assert intervention_of(of_cohorts) is None


HF = "Which drugs reduce hospitalisation in heart failure?"
DEFINED = "METHODS: The primary outcome was a composite of cardiovascular death or hospitalisation for heart failure. "


def test_a_trial_is_read_by_its_primary_outcome_and_one_of_other_people_is_marked_indirect() -> None:
    """Issue 23 (a new user's "Which drugs reduce hospitalisation in heart failure?"): the HFpEF trial (primary HR
    0.79, 0.69 to 0.90) read null, the post-MI trial in people without heart failure (primary HR 0.90, p = 0.21)
    favourable and unmarked, the dapagliflozin trial (HR 0.74, p < 0.001) not at all, and a metformin review
    that mentions heart failure once was counted."""
    hfpef = evidence_view(
        "402",
        "Empagliflozin in heart failure with preserved ejection fraction: a randomised trial",
        DEFINED + "RESULTS: The primary outcome occurred in 13.8% with empagliflozin and 17.1% with placebo (HR 0.79, "
        "95% CI 0.69 to 0.90). The effect was driven by fewer hospitalisations for heart failure (HR 0.71); "
        "cardiovascular death was not significantly reduced (HR 0.91, 0.76 to 1.09).",
        "randomized_controlled_trial",
        2,
        5988,
    )
    post_mi = evidence_view(
        "407",
        "Empagliflozin after acute myocardial infarction: a randomised trial of heart failure prevention",
        "METHODS: 6,522 patients without known heart failure were randomised. The primary outcome was a composite "
        "of first hospitalisation for heart failure or death. RESULTS: The primary outcome occurred in 8.2% of the "
        "empagliflozin group and 9.1% of the placebo group (HR 0.90, 95% CI 0.76 to 1.06; p=0.21). First "
        "hospitalisation for heart failure was less frequent with empagliflozin (HR 0.77, 0.60 to 0.98).",
        "randomized_controlled_trial",
        2,
        6522,
    )
    dapagliflozin = evidence_view(
        "401",
        "Dapagliflozin in patients with heart failure and reduced ejection fraction: a randomised trial",
        "METHODS: The primary outcome was a composite of worsening heart failure (hospitalisation or an urgent "
        "visit) or cardiovascular death. RESULTS: The primary outcome occurred in 16.3% of the dapagliflozin group "
        "and 21.2% of the placebo group (HR 0.74, 95% CI 0.65 to 0.85; p<0.001). Volume depletion (7.5% vs 6.8%) "
        "did not differ significantly.",
        "randomized_controlled_trial",
        2,
        4744,
    )
    review = evidence_view(
        "111",
        "Safety of metformin in older adults: a narrative review",
        "Lactic acidosis is rare and concentrated in people with sepsis or decompensated heart failure.",
        "narrative_review",
        5,
        0,
    )
    counted = strength_of(HF, [hfpef, post_mi, dapagliflozin, review])
    assert "pmid:111" in counted.off_topic
    verdict = open_verdict(HF, counted)
    (sglt2,) = verdict.candidates
    assert sglt2.intervention == "SGLT2 inhibitors"
    assert sorted(sglt2.favourable) == ["pmid:401", "pmid:402"]
    assert sglt2.null == ["pmid:407"]
    assert {m.name for m in sglt2.members} == {"empagliflozin", "dapagliflozin"}
    assert sglt2.indirect == {"pmid:407": "people without heart failure"}
    assert "of which 1 indirect" in verdict.headline
    numbers = {"pmid:402": 1, "pmid:407": 2, "pmid:401": 3}
    markdown = blocks_markdown(open_block(verdict, numbers))
    assert "answer it only indirectly: \\[2\\] (people without heart failure)." in markdown


def test_a_member_of_a_member_joins_the_group_that_stays_listed_and_a_cycle_joins_none() -> None:
    """A reviewer's case: "corticosteroids such as hydrocortisone" and "hydrocortisone with or without
    fludrocortisone" put fludrocortisone under hydrocortisone, itself under corticosteroids: its studies must
    reach corticosteroids, not a group no longer listed; two drugs each listed under the other stay apart."""
    from deepcritical.appraisal.candidates import _Group, _home

    groups = {name: _Group(name) for name in ("corticosteroids", "hydrocortisone", "fludrocortisone")}
    under = {"hydrocortisone": "corticosteroids", "fludrocortisone": "hydrocortisone"}
    assert _home(groups["fludrocortisone"], under, groups) is groups["corticosteroids"]
    assert _home(groups["hydrocortisone"], under, groups) is groups["corticosteroids"]
    assert _home(groups["corticosteroids"], under, groups) is None
    cycle = {"hydrocortisone": "fludrocortisone", "fludrocortisone": "hydrocortisone"}
    assert _home(groups["hydrocortisone"], cycle, groups) is None
