"""A question that asks two things ("prevent or treat depression"): the report says so under the verdict and
names which counted studies address prevention (people without the condition), which treatment (people who
have it), read from the people each study enrolled (issue 23, round 4)."""

from __future__ import annotations

import pytest

from deepcritical.appraisal.aims import aims_of, asks_two_aims
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.report.aims import aims_block
from deepcritical.report.markdown_writer import blocks_markdown

QUESTION = "Does vitamin D supplementation prevent or treat depression?"


@pytest.mark.parametrize(
    ("question", "two"),
    [
        (QUESTION, True),
        ("Can exercise treat and prevent low back pain?", True),
        ("Is vitamin D useful for prevention or treatment of depression?", True),
        ("Does vitamin D supplementation prevent depression?", False),
        ("Do statins reduce mortality in sepsis?", False),
    ],
)
def test_a_question_that_asks_to_prevent_or_treat_asks_two_things(question: str, two: bool) -> None:
    assert asks_two_aims(question) is two


PREVENTION = (
    "Effect of long-term vitamin D3 supplementation on the risk of depression in adults aged 50 years or older. "
    "METHODS: 18,353 adults were randomised to vitamin D3 supplementation or placebo; the outcome was the risk of "
    "depression. RESULTS: The risk of depression did not differ (HR 0.97, 95% CI 0.87 to 1.09). Results were "
    "consistent among participants with previous depression."
)
TREATMENT = (
    "Vitamin D supplementation in adolescents with depressive symptoms: a randomised trial. METHODS: 412 "
    "adolescents with depressive symptoms were assigned to vitamin D3 supplementation or placebo. RESULTS: "
    "Depressive symptom scores did not differ (mean difference -0.6 points, 95% CI -1.9 to 0.7)."
)
BOTH = (
    "Vitamin D supplementation and depressive symptoms: a meta-analysis of randomised trials. RESULTS: Vitamin D "
    "supplementation reduced depressive symptoms (SMD -0.32, 95% CI -0.45 to -0.19), mostly in trials of people "
    "with clinically diagnosed depression, and was negligible in general-population trials."
)
BACKGROUND_ONLY = "Low vitamin D has been associated with depression. RESULTS: Mood did not differ (p=0.4)."


def test_each_study_addresses_the_aim_of_the_people_it_enrolled() -> None:
    assert aims_of(PREVENTION, "depression") == {"prevention"}  # a subgroup with depression is no second aim
    assert aims_of(TREATMENT, "depression") == {"treatment"}
    assert aims_of(BOTH, "depression") == {"prevention", "treatment"}
    assert aims_of(BACKGROUND_ONLY, "depression") == set()  # "associated with depression" enrols nobody


def view(key: str, text: str) -> EvidenceView:
    title, abstract = text.split(". ", 1)
    return EvidenceView(
        id=key, title=title, source="pubmed", date="2020", text=abstract, design="randomized_controlled_trial",
        level=2, population="humans", document=key,
    )  # fmt: skip


# The aims as nouns: the frame reads depression (not "prevention") as what the question is about.
@pytest.mark.parametrize(
    "question", [QUESTION, "Is vitamin D supplementation effective for the prevention or treatment of depression?"]
)
def test_the_report_says_the_question_asks_two_things_and_which_studies_are_which(question: str) -> None:
    views = [view("pmid:1", PREVENTION), view("pmid:2", TREATMENT), view("pmid:3", BOTH)]
    counted = strength_of(question, views)
    assert set(counted.counted) == {"pmid:1", "pmid:2", "pmid:3"}
    text = blocks_markdown(aims_block(question, counted, {"pmid:1": 1, "pmid:2": 2, "pmid:3": 3}))
    assert text.startswith("**The question asks two things:** whether it prevents depression in people without")
    assert "Counted studies of prevention (people without it at the start): \\[1\\]" in text
    assert "treatment (people who have it): \\[2\\]" in text
    assert "both: \\[3\\]." in text
    one_aim = "Does vitamin D supplementation prevent depression?"
    assert aims_block(one_aim, strength_of(one_aim, views), {"pmid:1": 1}) == []
