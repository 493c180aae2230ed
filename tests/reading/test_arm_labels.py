"""Arms a trial names by letters, numbers or abbreviations it defines once ("group S", "AF") are read as the
intervention's or the comparator's arm (phases/16_result_reader.md, round 5)."""

from __future__ import annotations

import pytest

from deepcritical.reading.comparison import (
    COMPARATOR,
    INTERVENTION,
    Comparison,
    arm_labels,
    masked_tokens,
    subject_arm,
)
from deepcritical.reading.conventions import significant_by_groups, stated_by_p_values
from deepcritical.reading.results import ResultReader
from deepcritical.reading.units import split_units

BUPIVACAINE = Comparison.of("intraperitoneal bupivacaine", "normal saline", "rescue analgesic requirement")


@pytest.mark.parametrize(
    "definition",
    [
        "Patients received intraperitoneal bupivacaine (group B) or normal saline (group S).",
        "In Group B, 20 ml of 0.5% bupivacaine was instilled. In Group S, normal saline was instilled.",
        "Group B (bupivacaine 0.5%) and group S (normal saline) were compared.",
        "Group B received bupivacaine; group S received normal saline.",
        "Patients were given bupivacaine (Group B, n = 30) or saline (Group S, n = 30).",
    ],
)
def test_a_group_letter_defined_in_the_article_names_its_arm(definition: str) -> None:
    assert dict(arm_labels(definition, BUPIVACAINE)) == {"b": INTERVENTION, "s": COMPARATOR}


def test_a_defined_abbreviation_names_its_arm_and_a_statistic_never_does() -> None:
    comparison = Comparison.of("conventional fractionation", "accelerated fractionation", "mucositis")
    text = (
        "Patients were randomised to accelerated fractionation (AF) or conventional fractionation (CF). "
        "The odds ratio (OR) and hazard ratio (HR) were computed with their confidence interval (CI)."
    )
    assert dict(arm_labels(text, comparison)) == {"af": COMPARATOR, "cf": INTERVENTION}


def test_a_label_whose_definitions_name_neither_arm_or_both_alike_is_no_arms() -> None:
    text = "Group A (the first site) and group C (bupivacaine and saline) were enrolled."
    assert arm_labels(text, BUPIVACAINE) == ()


def test_a_letter_is_masked_only_where_it_names_a_group() -> None:
    labelled = BUPIVACAINE.labelled("Patients received bupivacaine (group B) or normal saline (group S).")
    masked = masked_tokens("Requirement was higher in group S than in groups B (p = 0.01), b-lines aside.", labelled)
    # Stems: "groups" reads "group".
    assert [masked[index + 1] for index, token in enumerate(masked) if token == "group"] == ["xcomp", "xint"]
    assert masked.count("xint") == 1
    assert masked.count("xcomp") == 1
    # The same sentence without the article's definitions leaves the letters as they are.
    unlabelled = masked_tokens("Requirement was higher in group S than in group B.", BUPIVACAINE)
    assert "xint" not in unlabelled
    assert "xcomp" not in unlabelled


def test_a_list_of_groups_maps_each_label() -> None:
    comparison = Comparison.of("buprenorphine or dexmedetomidine", "sterile water", "motor recovery")
    labelled = comparison.labelled(
        "Sterile water was added in the control group (Group C), buprenorphine in the buprenorphine group "
        "(Group B) and dexmedetomidine in the dexmedetomidine group (Group D)."
    )
    masked = masked_tokens("Recovery took longer in groups B and D than in group C.", labelled)
    assert masked[masked.index("group") + 1 :][:3] == ["xint", "and", "xint"]
    assert masked[-1] == "xcomp"


def test_a_hyphenated_word_naming_an_arm_is_that_arm() -> None:
    comparison = Comparison.of("chloroquine", "artemether with lumefantrine", "gametocyte carriage")
    assert "xcomp" in masked_tokens("Children given co-artemether carried fewer gametocytes.", comparison)
    # A word trials call an arm by is not enough inside a compound: "pre-intervention" names no arm.
    assert "xint" not in masked_tokens("Pre-intervention scores were similar.", Comparison.of("yoga", "usual", "pain"))


def test_the_reader_reads_a_result_stated_by_group_letters_for_the_arms_they_name() -> None:
    article = (
        "METHODS: Patients received intraperitoneal bupivacaine (group B) or normal saline (group S). "
        "RESULTS: The rescue analgesic requirement was significantly higher in group S than in group B "
        "(p < 0.001)."
    )
    reader = ResultReader.load()
    reading = reader.read(split_units(article), BUPIVACAINE)
    assert reading.label == "decreased"
    # Read the other way round (saline against bupivacaine), the same sentence is an increase.
    swapped = Comparison.of("normal saline", "intraperitoneal bupivacaine", "rescue analgesic requirement")
    assert reader.read(split_units(article), swapped).label == "increased"


@pytest.mark.parametrize(
    ("sentence", "subject"),
    [
        ("Mortality was higher in the placebo group than in the drug group.", COMPARATOR),
        ("Compared with the placebo group, the drug group had lower mortality.", INTERVENTION),
        ("Compared with women in the placebo arm, women in the drug arm had less pain.", INTERVENTION),
        ("Mortality was lower in the drug group than in the placebo group.", INTERVENTION),
        # Naming one arm only, a unit may name the other in words the comparison does not know.
        ("Mortality was 27.9% with hydrocortisone and 28.8% with placebo.", None),
        # A reviewer's cases: "over" and "than" of time and counts are no reference words there.
        ("Over 12 months, drug significantly reduced mortality compared with placebo (p < 0.01).", INTERVENTION),
        ("In more than 3000 patients, mortality was higher with placebo than with drug.", COMPARATOR),
    ],
)
def test_the_subject_of_a_result_is_the_arm_named_first_unless_it_is_the_reference(
    sentence: str, subject: str | None
) -> None:
    assert subject_arm(sentence, Comparison.of("drug", "placebo", "mortality pain")) == subject


@pytest.mark.slow
def test_a_result_stated_of_the_comparator_is_read_turned_by_both_classifiers() -> None:
    """The classifiers learn direction words better than which arm they speak of: the reader turns a unit
    whose subject is the comparator, so both orders of one result read alike."""
    comparison = Comparison.of("drug A", "placebo", "mortality")
    intervention_first = "Mortality was significantly lower in the drug A group than in the placebo group (p < 0.01)."
    comparator_first = "Mortality was significantly higher in the placebo group than in the drug A group (p < 0.01)."
    for name in ("linear", "transformer"):
        try:
            reader = ResultReader.load(name)  # type: ignore[arg-type]
        except FileNotFoundError:
            continue  # the transformer's base model is an install of its own; the linear reader is always there
        for sentence in (intervention_first, comparator_first):
            reading = reader.readings([sentence], comparison)[0]
            assert max(reading, key=reading.__getitem__) == "decreased", (name, sentence, reading)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Mortality was 27.9% with hydrocortisone and 28.8% with placebo (p=0.50).", "no_difference"),
        (
            "Pain fell from 6.1 to 4.2 with drug A and from 6.0 to 4.4 with placebo (P = 0.31 and p=0.08).",
            "no_difference",
        ),
        # A significant p-value, interval or word beside it: the large p-value settles nothing.
        (
            "Mortality was 20% with drug A and 30% with placebo (p = 0.01); sepsis rates did not differ (p = 0.40).",
            None,
        ),
        ("Mortality was lower with drug A (RR 0.70, 95% CI 0.55 to 0.89); p for interaction = 0.60.", None),
        ("Drug A reduced mortality by 30% (HR 0.70); P for heterogeneity = 0.40.", None),
        ("Drug A significantly reduced pain scores at 6 h (p = 0.21 at 24 h).", None),
        ("Mortality was 27.9% with drug A and 28.8% with placebo.", None),
    ],
)
def test_a_unit_whose_every_p_value_is_large_reads_as_no_difference(sentence: str, expected: str | None) -> None:
    reading = stated_by_p_values(sentence)
    assert (max(reading, key=reading.__getitem__) if reading else None) == expected


# A classifier's reading of a unit as no significant difference, unsure which way the numbers go.
READ_AS_NONE = {"increased": 0.15, "decreased": 0.3, "no_difference": 0.55}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # Each arm's value with a small p-value: a significant difference, the classifier's way (decreased).
        (
            "The proportion needing additional uterotonic treatment was 3.1 % (95 % CI 1.7-5.1 %) in the carbetocin "
            "group and 7.2 % (95 % CI 5.8-8.9 %) in all oxytocin groups combined, p = 0.0110.",
            "decreased",
        ),
        ("Blood loss was 350 ml with tranexamic acid and 520 ml with placebo (p<0.001).", "decreased"),
        # A large p-value, a bare p-value (it may be another comparison's) or a change within one arm: as read.
        ("Blood loss was 350 ml with tranexamic acid and 380 ml with placebo (p=0.41).", "no_difference"),
        ("The difference in blood loss was significant (p = 0.02).", "no_difference"),
        ("Pain fell from 6.1 to 4.2 with drug A (p<0.001).", "no_difference"),
        # A small p-value of another test: non-inferiority (the arms do not differ beyond a margin), an interaction.
        ("Mortality was 12% with drug A and 14% with placebo (p = 0.001 for non-inferiority).", "no_difference"),
        ("Mortality was 12% with drug A and 14% with placebo (p for interaction = 0.01).", "no_difference"),
    ],
)
def test_a_unit_stating_each_arms_value_with_a_small_p_value_is_never_read_as_no_difference(
    sentence: str, expected: str
) -> None:
    reading = significant_by_groups(sentence, READ_AS_NONE)
    assert max(reading, key=reading.__getitem__) == expected
    assert sum(reading.values()) == pytest.approx(1.0)
    if expected != "no_difference":  # the classifier's odds of increase against decrease are kept
        assert reading["decreased"] / reading["increased"] == pytest.approx(2.0)


def test_the_reader_reads_a_significant_difference_in_the_arms_values_as_one() -> None:
    """A real trial's sentence (Evidence Inference, validation) the linear reader read as no difference."""
    sentence = (
        "The proportion of subjects needing additional uterotonic treatment was 3.1 % (95 % confidence interval (CI) "
        "1.7–5.1 %) in the carbetocin group and 7.2 % (95 % CI 5.8–8.9 %) in all oxytocin groups combined, p = 0.0110."
    )
    reading = ResultReader.load().read_text(sentence, "carbetocin", "oxytocin", "additional uterotonic treatment")
    assert reading.label in ("increased", "decreased")


def test_a_reading_of_a_significant_difference_is_left_as_it_is() -> None:
    decreased = {"increased": 0.1, "decreased": 0.6, "no_difference": 0.3}
    text = "Blood loss was 350 ml with tranexamic acid and 520 ml with placebo (p<0.001)."
    assert significant_by_groups(text, decreased) == decreased


def test_a_letter_before_a_statistics_sign_is_the_statistic_not_an_arm() -> None:
    comparison = Comparison.of("sevoflurane", "propofol", "emergence agitation").labelled(
        "Children received sevoflurane (group S) or propofol (group P)."
    )
    masked = masked_tokens("Agitation occurred in 12% of group P and 30% of group S (p = 0.002).", comparison)
    assert masked[-3:] == ["p", "=", "num"]
    assert masked.count("xcomp") == 1


def test_a_group_named_by_the_words_trials_use_for_arms_takes_its_label() -> None:
    comparison = Comparison.of("early mobilisation", "usual care", "length of stay")
    text = "Patients received early mobilisation (group E) or usual care (group U)."
    assert dict(arm_labels(text, comparison)) == {"e": INTERVENTION, "u": COMPARATOR}


def test_a_short_word_abbreviation_never_masks_that_word() -> None:
    comparison = Comparison.of("antithrombin", "placebo", "mortality").labelled(
        "Patients received antithrombin (AT) or placebo."
    )
    assert "at" not in dict(comparison.labels)
    assert "xint" not in masked_tokens("At 28 days, mortality was similar.", comparison)


def test_a_study_read_in_a_run_takes_the_labels_its_methods_define() -> None:
    """The labels are defined in Methods, which the units that may state a result leave out: the study reader
    labels the comparison from the whole abstract (a reviewer's finding)."""
    from deepcritical.appraisal.framing import EvidenceView
    from deepcritical.appraisal.study_reading import StudyReader
    from deepcritical.models import Citation, Evidence

    text = (
        "METHODS: Patients received intraperitoneal bupivacaine (group B) or normal saline (group S). "
        "RESULTS: The rescue analgesic requirement was significantly higher in group S than in group B (p < 0.001)."
    )
    item = Evidence(
        content=text,
        citation=Citation(source="pubmed", title="Intraperitoneal bupivacaine after surgery", url="https://x.org/1"),
    )
    question = "Does intraperitoneal bupivacaine reduce rescue analgesic requirement compared with normal saline?"
    reading = StudyReader(question).read(EvidenceView.of(item))
    assert reading.reading.label == "decreased"
    assert reading.direction == "favourable"
