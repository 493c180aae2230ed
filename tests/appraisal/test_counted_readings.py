"""What a report counts and how it reads each counted study (issue 23, round 3: what a new user saw): a web
page about a trial is no second reading of it; a trial answers by its primary outcome, and one in people
without the question's condition answers it only indirectly; a hedged sentence states no result; the
brief says what the verdict weighed; a yes or a no names the counted studies that read the other way."""

from __future__ import annotations

import pytest

from deepcritical.appraisal import stance
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import NOT_A_RESULT
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import COUNTED_METHOD, counted_verdict, weighed_readings
from deepcritical.report.extractive import extractive_report
from helpers.builders import fixed_stance

SGLT2 = "Do SGLT2 inhibitors improve outcomes in heart failure?"
STATINS = "Do statins reduce mortality in sepsis?"


def view(key: str, text: str, title: str, design: str = "randomized_controlled_trial", **grade: object) -> EvidenceView:
    level = grade.pop("level", 2 if design != "web" else None)
    return EvidenceView(
        id=key,
        title=title,
        source="web" if design == "web" else "pubmed",
        date="2024",
        text=text,
        design=design,
        level=level,  # type: ignore[arg-type]
        population="humans",
        document=key,
        **grade,  # type: ignore[arg-type]
    )


# The demo corpus's post-MI trial (pmid:99000407): its primary outcome is null, a secondary one significant.
POST_MI = view(
    "pmid:7",
    "METHODS: Within 14 days of hospitalisation for acute MI, 6,522 patients at increased risk of heart failure "
    "(a new ejection fraction below 45% or congestion) and without known heart failure were randomised to "
    "empagliflozin 10 mg daily or placebo. The primary outcome was a composite of first hospitalisation for heart "
    "failure or death from any cause. RESULTS: Over a median of 17.9 months, the primary outcome occurred in 8.2% "
    "of the empagliflozin group and 9.1% of the placebo group (HR 0.90, 95% CI 0.76 to 1.06; p=0.21). First "
    "hospitalisation for heart failure was less frequent with empagliflozin (HR 0.77, 0.60 to 0.98), but death "
    "from any cause was not (HR 0.96). Adverse events were similar, with no excess of ketoacidosis or hypotension.",
    "Empagliflozin after acute myocardial infarction: a randomised trial of heart failure prevention.",
    n=6522,
)
DAPA = view(
    "pmid:1",
    "RESULTS: Over a median of 18.2 months, the primary outcome occurred in 16.3% of the dapagliflozin group and "
    "21.2% of the placebo group (HR 0.74, 95% CI 0.65 to 0.85; p<0.001).",
    "Dapagliflozin in patients with heart failure and reduced ejection fraction.",
    n=4744,
)


META = view(
    "pmid:5",
    "RESULTS: In nine randomised trials, statins showed no effect on 28-day mortality in sepsis (RR 0.98, 95% "
    "CI 0.84 to 1.14).",
    "Statins for sepsis: a meta-analysis of randomised trials",
    design="meta_analysis",
    level=1,
    n=2275,
)


def test_a_trial_whose_primary_outcome_did_not_differ_is_null_never_favourable() -> None:
    reading = StudyReader(SGLT2).read(POST_MI)
    assert reading.direction == "null"
    assert reading.sentence is not None
    assert "p=0.21" in reading.sentence
    assert StudyReader(SGLT2).read(DAPA).direction == "favourable"  # a positive primary outcome still reads so


def test_a_trial_in_people_without_the_questions_condition_answers_it_indirectly() -> None:
    # The trial names the question's intervention and outcomes: only its people (post-MI, "without known heart
    # failure") make it indirect.
    treats = StudyReader("Does empagliflozin improve outcomes in heart failure?").read(POST_MI)
    assert (treats.direction, treats.direct) == ("null", False)
    assert StudyReader(SGLT2).read(DAPA).direct
    # A question about preventing the condition is answered directly by a prevention trial.
    assert StudyReader("Does empagliflozin prevent heart failure after myocardial infarction?").read(POST_MI).direct


# A news page about the rosuvastatin trial: the trial's result again, not a study of its own.
TRIAL = view(
    "pmid:4",
    "RESULTS: Sixty-day in-hospital mortality was 28.5% with rosuvastatin and 24.9% with placebo (difference 3.6 "
    "percentage points, 95% CI -2.8 to 10.0; p=0.21).",
    "Rosuvastatin for sepsis-associated ARDS: a randomised trial",
    n=745,
)
COHORT = view(
    "pmid:3",
    "RESULTS: Thirty-day mortality was 18.7% in current statin users and 22.9% in non-users with sepsis (adjusted "
    "HR 0.82, 95% CI 0.77 to 0.87).",
    "Pre-admission statin use and 30-day mortality in sepsis: a cohort study",
    design="cohort",
    level=3,
    n=53926,
)
NEWS = view(
    "url:https://news.example/rosuvastatin-fails",
    "Death rates at 60 days were 28.5% with the statin and 24.9% with placebo, a difference that was not "
    "statistically significant, in patients with sepsis.",
    "Cholesterol drug rosuvastatin fails in sepsis lung injury trial",
    design="web",
)
COMMENTARY = view(
    "pmid:9",
    "Statins reduced mortality in sepsis in observational studies, but trials were null.",
    "Statins in sepsis: an editorial",
    design="editorial_or_letter",
    level=5,
)


def test_web_pages_and_commentary_are_set_apart_never_a_counted_reading() -> None:
    strength = strength_of(STATINS, [TRIAL, COHORT, NEWS, COMMENTARY])
    assert strength.counted == [TRIAL.id, COHORT.id]
    assert strength.not_studies == [NEWS.id, COMMENTARY.id]
    assert set(strength.directions) == {TRIAL.id, COHORT.id}  # one study, one reading
    assert [w.view.id for w in weighed_readings(STATINS, strength)] == [TRIAL.id, COHORT.id]
    report = extractive_report(STATINS, [TRIAL, COHORT, NEWS, COMMENTARY])
    quoted = {i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids}
    assert quoted == {TRIAL.id, COHORT.id}  # the news page is not quoted as a second, contrary finding


def test_the_brief_states_what_the_verdict_weighed() -> None:
    # The verdict weighs the studies that address the question directly (the meta-analysis and the trial; the
    # cohort's reading is not on the question's own comparison); the brief says so in the verdict's words, and
    # never counts the web page.
    items = [META, TRIAL, COHORT, NEWS]
    strength = strength_of(STATINS, items)
    verdict = counted_verdict(STATINS, strength, items)
    assert verdict.method == COUNTED_METHOD
    assert (verdict.answer, verdict.label) == ("no difference", "no")
    brief = extractive_report(STATINS, items).answer_brief
    assert verdict.rationale in brief
    assert "2 direct studies" in verdict.rationale
    assert NEWS.id not in brief


def test_one_direct_study_answers_and_the_brief_says_what_it_read() -> None:
    # One direct study is enough: its reading gives the answer (the stance model never overrides it).
    items = [TRIAL, COHORT, NEWS]
    verdict = counted_verdict(STATINS, strength_of(STATINS, items), items)
    assert verdict.method == COUNTED_METHOD
    assert verdict.certainty is not None
    brief = extractive_report(STATINS, items).answer_brief
    assert verdict.rationale in brief
    assert NEWS.id not in brief


def test_a_yes_or_no_names_the_weighed_studies_that_read_the_other_way() -> None:
    items = [META, TRIAL, COHORT]
    verdict = counted_verdict(STATINS, strength_of(STATINS, items), items)
    assert verdict.label == "no"
    assert verdict.against_ids == [COHORT.id]  # the favourable cohort, against a no
    assert not set(verdict.against_ids) & set(verdict.evidence_ids)
    only_favourable = counted_verdict(STATINS, strength_of(STATINS, [COHORT]), [COHORT])
    assert only_favourable.label == "yes"
    assert only_favourable.against_ids == []


@pytest.mark.parametrize(
    ("sentence", "speculates"),
    [
        ("Vitamin D may modestly reduce symptoms in people with depression, particularly if they are deficient.", True),
        ("Supplements may help mood mainly in people who are deficient.", True),
        ("Metformin could be beneficial in early Alzheimer's disease.", True),
        ("Metformin dampens neuroinflammation in the aged brain, a route by which it might protect cognition.", False),
        ("Vitamin D reduced depressive symptoms slightly (SMD -0.32, 95% CI -0.45 to -0.19).", False),
    ],
)
def test_a_hedged_claim_of_effect_states_no_result(sentence: str, speculates: bool) -> None:
    assert bool(NOT_A_RESULT.search(sentence)) == speculates


def test_a_speculative_conclusion_is_not_quoted_when_the_results_state_one() -> None:
    meta = view(
        "pmid:8",
        "RESULTS: Overall, vitamin D reduced depressive symptoms slightly (SMD -0.32, 95% CI -0.45 to -0.19). "
        "CONCLUSIONS: Vitamin D may modestly reduce symptoms in people with depression, particularly if they are "
        "deficient.",
        "Vitamin D supplementation and depression: a meta-analysis",
        design="meta_analysis",
        level=1,
    )
    report = extractive_report("Does vitamin D supplementation treat depression?", [meta])
    (finding,) = report.key_findings
    assert finding.statement.startswith("Overall, vitamin D reduced depressive symptoms slightly")


def test_the_brief_names_the_counted_items_that_state_a_result_but_carry_no_weight() -> None:
    # The counted line says how many items state a result; the weighing sentence counts only weighed studies.
    # A narrative review stating a result is named, so the two counts do not read as a contradiction.
    review = view(
        "pmid:9",
        "Statins reduced mortality in sepsis across the studies reviewed here.",
        "Statins in sepsis: a narrative review",
        design="narrative_review",
        level=5,
    )
    items = [META, TRIAL, COHORT, review]
    strength = strength_of(STATINS, items)
    weighed = {w.view.id for w in weighed_readings(STATINS, strength)}
    assert review.id in strength.stated
    assert review.id not in weighed
    brief = extractive_report(STATINS, items).answer_brief
    assert "1 other counted item that states a result carries no weight" in brief
    assert f"({review.id})" in brief.split("carries no weight")[1]


@pytest.mark.parametrize(
    "question",
    [
        STATINS,  # asks which way the outcome moves: the review's answer
        "Do statins help patients with sepsis?",  # asks whether it helps: the benefit the readings give
        "Do statins improve outcomes in sepsis?",
    ],
)
@pytest.mark.parametrize("items", [[META, TRIAL, COHORT], [COHORT]], ids=["three studies", "one cohort"])
def test_the_stance_model_never_overrides_the_counted_studies_readings(
    question: str, items: list[EvidenceView], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 38: the PubMedQA stance model may inform a reading, never override it. When a counted study's reading
    # carries the answer, the verdict is the same whatever the stance model says: sure of yes, of no or of maybe.
    verdicts = set()
    for leaning in ((0.98, 0.01, 0.01), (0.01, 0.98, 0.01), (0.01, 0.01, 0.98)):
        monkeypatch.setattr(stance, "stance_model", lambda leaning=leaning: fixed_stance(*leaning))
        verdict = counted_verdict(question, strength_of(question, items), items)
        assert verdict.method == COUNTED_METHOD
        verdicts.add((verdict.label, verdict.answer, verdict.confidence, tuple(verdict.evidence_ids)))
    assert len(verdicts) == 1
    assert verdicts.pop()[0] in ("yes", "no")
