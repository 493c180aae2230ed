"""A study's reading is for the question's outcome: a result for another outcome states nothing on it."""

from __future__ import annotations

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import NOT_A_RESULT
from deepcritical.appraisal.question_comparison import (
    asks_effect,
    favourable_movement,
    judged_change,
    other_subtype,
    question_comparison,
)
from deepcritical.appraisal.study_reading import READING_FEATURES, StudyReader, reading_features
from deepcritical.reading.abbreviations import defined_abbreviations


def study(text: str, title: str = "Statins in sepsis: a cohort study") -> EvidenceView:
    return EvidenceView(
        id="pmid:1", title=title, source="pubmed", date="2020", text=text, design="cohort", level=3, document="pmid:1"
    )


def test_a_result_for_another_outcome_is_no_result_on_the_questions_outcome() -> None:
    reader = StudyReader("Do statins reduce mortality in sepsis?")
    muscle = study(
        "RESULTS: In sepsis, creatine kinase above 10 times normal occurred in 3.1% of statin users and 0.9% of "
        "non-users (OR 2.9, 95% CI 2.3 to 3.7)."
    )
    reading = reader.read(muscle)
    assert reading.direction is None
    assert reading.other_outcome == "unfavourable"  # more muscle injury: its own result, on its own outcome


def test_the_sentence_on_the_questions_outcome_is_read_when_another_ranks_first() -> None:
    reader = StudyReader("Do statins reduce mortality in sepsis?")
    both = study(
        "RESULTS: Statin users had fewer ICU admissions than non-users (OR 0.71, 95% CI 0.60 to 0.84; p<0.001). "
        "Death at 30 days did not differ between statin users and non-users (HR 0.97, 95% CI 0.85 to 1.10)."
    )
    reading = reader.read(both)
    assert reading.direction == "null"
    assert reading.sentence is not None
    assert reading.sentence.startswith("Death at 30 days")


def test_outcomes_in_a_condition_ask_for_a_clinical_outcome_not_a_mechanism() -> None:
    reader = StudyReader("Do SGLT2 inhibitors improve outcomes in heart failure?")
    energetics = study(
        "RESULTS: In heart failure, the PCr/ATP ratio did not change with SGLT2 inhibitors (1.62 vs 1.60; p=0.72).",
        title="SGLT2 inhibitors and myocardial energetics in heart failure",
    )
    assert reader.read(energetics).direction is None
    events = study(
        "RESULTS: The primary outcome occurred in 16.3% of the SGLT2 inhibitors group and 21.2% of the placebo "
        "group (HR 0.74, 95% CI 0.65 to 0.85).",
        title="SGLT2 inhibitors in heart failure",
    )
    assert reader.read(events).direction == "favourable"


def test_the_wanted_movement_is_read_from_the_questions_effect_verb_only() -> None:
    # "preventive" names the kind of care, "higher" the dose: neither is the way the outcome should move.
    quality = "Quality scores were higher with a regular clinician than without one (69 vs 65, p = 0.01)."
    preventive = "Does a regular clinician improve the quality of preventive care?"
    assert favourable_movement(preventive, quality) == "increased"
    seizures = "Seizure frequency was reduced by half with the higher dose (p < 0.01)."
    assert favourable_movement("Can epilepsy be treated with higher doses of zonisamide?", seizures) == "decreased"
    # The effect verb still says it when it does.
    assert favourable_movement("Do statins reduce mortality in sepsis?", "Mortality was 20% vs 25%.") == "decreased"
    assert favourable_movement("Does exercise increase walking distance?", "Walking distance changed.") == "increased"


def test_an_abbreviation_the_study_defines_names_the_questions_outcome() -> None:
    assert defined_abbreviations(
        "Statins may prevent atrial fibrillation (AF) after coronary artery bypass grafting (CABG); the odds ratio "
        "(OR) ... the statin group (n = 77)"
    ) == {"AF": "atrial fibrillation", "CABG": "coronary artery bypass grafting", "OR": "odds ratio"}
    reader = StudyReader("Do preoperative statins reduce atrial fibrillation after cardiac surgery?")
    af = study(
        "OBJECTIVE: Statins may prevent atrial fibrillation (AF) after cardiac surgery. RESULTS: Postoperative AF "
        "was significantly lower in the statin group than in the non-statin group (16% versus 33%, p = 0.005).",
        title="Preoperative statins and atrial fibrillation after cardiac surgery",
    )
    reading = reader.read(af)
    assert reading.direction == "favourable"
    assert reading.direct


def test_a_clinical_outcome_is_answered_by_any_clinical_outcome() -> None:
    reader = StudyReader("Does pretreatment with statins improve clinical outcome after stroke?")
    stroke = study(
        "RESULTS: Death or dependency at 3 months did not differ between statin users and non-users (OR 1.02, "
        "95% CI 0.80 to 1.30).",
        title="Statin pretreatment and outcome after stroke",
    )
    assert reader.read(stroke).direction == "null"


def test_the_result_readers_reading_is_a_feature_of_the_stance_model() -> None:
    question = "Does exercise reduce pain in knee osteoarthritis?"
    significant = reading_features(
        question, "RESULTS: Pain was significantly lower with exercise than with usual care (p < 0.001)."
    )
    null = reading_features(
        question, "RESULTS: Pain did not differ between exercise and usual care (p = 0.62), with no significant change."
    )
    names = dict(zip(READING_FEATURES, significant, strict=True))
    assert names["reader_change"] > 0.5
    assert names["reader_favourable"] > names["reader_unfavourable"]
    assert dict(zip(READING_FEATURES, null, strict=True))["reader_no_difference"] > 0.5
    assert len(READING_FEATURES) == len(significant)


def test_a_trials_primary_outcome_is_read_by_its_own_definition() -> None:
    """Issue 23 (a new user's "Which drugs reduce hospitalisation in heart failure?"): "the primary outcome
    occurred in ..." names hospitalisation when the trial defined its primary outcome so, and the trial answers
    by it: a null primary (HR 0.90, p = 0.21) over a favourable secondary one, a favourable one over a mixed
    sentence ("fewer hospitalisations ...; cardiovascular death was not significantly reduced")."""
    reader = StudyReader("Which drugs reduce hospitalisation in heart failure?")
    definition = "METHODS: The primary outcome was a composite of hospitalisation for heart failure or death. "
    null_primary = study(
        definition + "RESULTS: The primary outcome occurred in 8.2% of the empagliflozin group and 9.1% of the "
        "placebo group (HR 0.90, 95% CI 0.76 to 1.06; p=0.21). First hospitalisation for heart failure was less "
        "frequent with empagliflozin (HR 0.77, 0.60 to 0.98).",
        title="Empagliflozin after myocardial infarction: a randomised trial",
    )
    reading = reader.read(null_primary)
    assert reading.direction == "null"
    assert reading.sentence is not None
    assert reading.sentence.startswith("The primary outcome occurred")
    favourable_primary = study(
        definition + "RESULTS: The primary outcome occurred in 13.8% with empagliflozin and 17.1% with placebo "
        "(HR 0.79, 95% CI 0.69 to 0.90). The effect was driven by fewer hospitalisations for heart failure "
        "(HR 0.71); cardiovascular death was not significantly reduced (HR 0.91, 0.76 to 1.09).",
        title="Empagliflozin in heart failure: a randomised trial",
    )
    assert reader.read(favourable_primary).direction == "favourable"
    # Without the definition, "the primary outcome" names no outcome of the question's.
    undefined = study(
        "RESULTS: The primary outcome occurred in 13.8% with empagliflozin and 17.1% with placebo (HR 0.79, "
        "95% CI 0.69 to 0.90).",
        title="Empagliflozin in heart failure: a randomised trial",
    )
    assert reader.read(undefined).direction is None


def test_an_open_questions_head_is_no_effect_verb() -> None:
    """In "What *treatments* reduce persistent fatigue" the effect verb is "reduce", so the outcome is persistent
    fatigue (not "reduce persistent fatigue") and a decrease is what it asks."""
    question = "What treatments reduce persistent fatigue in long COVID?"
    assert question_comparison(question).written[2] == "persistent fatigue"
    assert favourable_movement(question, "Fatigue scores rose.") == "decreased"
    assert question_comparison("What treatment improves survival in sepsis?").written[2] == "survival"
    # A closed question keeps its verb.
    assert question_comparison("Do statins reduce mortality in sepsis?").written[2] == "mortality"


def test_a_single_measure_primary_outcome_is_read_by_its_name_and_a_judged_change_by_its_verb() -> None:
    """Issue 23 (the long COVID question): the rehabilitation trial's primary outcome is one measure, the
    FACIT-Fatigue score, whose rise is less fatigue; its result sentence ("FACIT-Fatigue improved by 6.8 points
    ... p<0.001") is the trial's, and "improved" says it is favourable, though fatigue is asked to go down."""
    reader = StudyReader("What treatments reduce persistent fatigue in long COVID?")
    trial = study(
        "METHODS: Adults with long COVID fatigue were randomised to rehabilitation or usual care. The primary "
        "outcome was the FACIT-Fatigue score at 3 months. RESULTS: FACIT-Fatigue improved by 6.8 points with "
        "rehabilitation and by 2.6 points with usual care (adjusted difference 4.2, 95% CI 2.1 to 6.3; p<0.001). "
        "CONCLUSIONS: Rehabilitation with pacing modestly reduced fatigue without increasing post-exertional malaise.",
        title="Rehabilitation with pacing versus usual care for fatigue in long COVID: a randomised trial",
    )
    reading = reader.read(trial)
    assert reading.sentence is not None
    assert reading.sentence.startswith("FACIT-Fatigue improved")
    assert reading.direction == "favourable"
    assert judged_change("Fatigue improved by 6.8 points") == "favourable"
    assert judged_change("Mortality increased and function worsened") == "unfavourable"
    for neither in ("did not improve fatigue", "reduced mortality without worsening", "pain improved, sleep worsened"):
        assert judged_change(neither) is None, neither


def test_a_composites_result_is_not_read_for_its_parts() -> None:
    """A new user's "Does empagliflozin reduce mortality in heart failure?": the HFpEF trial's composite of
    cardiovascular death or hospitalisation fell (HR 0.79) while its deaths did not ("all-cause mortality was
    similar"); on a mortality question it reads null, from what it states for deaths, not favourable from the
    composite. A trial whose deaths fell too reads favourable from them; one that states only the composite keeps
    the composite's reading."""
    reader = StudyReader("Does empagliflozin reduce mortality in heart failure?")
    definition = (
        "METHODS: Patients with heart failure were randomised to empagliflozin or placebo. The primary outcome was a "
        "composite of cardiovascular death or hospitalisation for heart failure. "
    )
    primary = (
        "RESULTS: The primary outcome occurred in 13.8% with empagliflozin and 17.1% with placebo (HR 0.79, 95% CI "
        "0.69 to 0.90). "
    )
    title = "Empagliflozin in heart failure: a randomised trial"
    deaths_similar = study(
        definition + primary + "The effect was driven by fewer hospitalisations for heart failure (HR 0.71); "
        "cardiovascular death was not significantly reduced (HR 0.91, 0.76 to 1.09), and all-cause mortality was "
        "similar (HR 1.00). CONCLUSIONS: Empagliflozin reduced the combined risk of cardiovascular death or "
        "hospitalisation for heart failure, mainly by reducing hospitalisations; no mortality benefit was shown.",
        title=title,
    )
    reading = reader.read(deaths_similar)
    assert reading.direction == "null"
    assert reading.sentence is not None
    # Read from the clause on deaths, quoted as the whole sentence it is in.
    assert "all-cause mortality was similar" in reading.sentence
    assert reading.sentence.startswith("The effect was driven by fewer hospitalisations")
    deaths_fell = study(
        definition + primary + "Cardiovascular death (HR 0.82) and death from any cause (HR 0.83) were also reduced.",
        title=title,
    )
    assert reader.read(deaths_fell).direction == "favourable"
    # The DAPA-HF-like trial on "death": its deaths' sentence, unsure to the reader, does not overturn its composite.
    assert StudyReader("Does empagliflozin reduce death in heart failure?").read(deaths_fell).direction == "favourable"
    assert reader.read(study(definition + primary, title=title)).direction == "favourable"


def test_a_slower_decline_is_a_change_for_the_better() -> None:
    """A new user's "Does metformin slow cognitive decline in Alzheimer's disease?": the cohort whose metformin
    users "showed a slower decline ... in a composite memory score (difference 0.05 SD per year)" was read
    unfavourable (the score went up, and the question asks for less decline) and quoted as contrary evidence."""
    assert judged_change("Metformin users showed a slower decline in a memory score (p=0.04)") == "favourable"
    assert judged_change("Progression was attenuated; slower deterioration of function (p=0.01)") == "favourable"
    assert judged_change("Treated patients had a faster decline in memory (p=0.02)") == "unfavourable"
    # A pace that describes who was studied judges nothing: the improvement is the judgement.
    assert judged_change("Patients with rapid progression improved with treatment.") == "favourable"
    assert judged_change("Metformin did not slow the decline in memory") is None
    # "Reduced worsening heart failure": the worsening is what was reduced (the DAPA-HF-like trial's conclusion was
    # read unfavourable and quoted as contrary evidence on "Is dapagliflozin better than placebo for ...?").
    assert judged_change("Dapagliflozin reduced worsening heart failure and cardiovascular death.") is None
    assert judged_change("Treatment reduced pain but sleep worsened.") == "unfavourable"
    # What was reduced ends at a conjunction: the worsening after it is a change for the worse.
    assert judged_change("HbA1c decreased and worsening of renal function occurred in 12%.") == "unfavourable"
    assert judged_change("Pain was reduced but worsening fatigue was reported.") == "unfavourable"
    reader = StudyReader("Does metformin slow cognitive decline in Alzheimer's disease?")
    cohort = study(
        "RESULTS: Metformin users showed a slower decline in posterior cingulate FDG uptake (-0.9% vs -1.7% per "
        "year; p=0.01) and in a composite memory score (difference 0.05 SD per year; p=0.04).",
        title="Metformin use and cognitive decline in Alzheimer's disease: a cohort study",
    )
    assert reader.read(cohort).direction == "favourable"


def test_on_an_open_question_a_study_that_tests_no_intervention_states_no_result() -> None:
    """A new user's "Which treatments reduce fatigue in long COVID?": "Serum serotonin was 43% lower in long
    COVID than in recovered controls" was a favourable key finding and counted favourable in the strength table,
    though it is a biomarker's difference, no treatment's result. It now states no result on the question (its
    own result kept as another outcome's); a trial, and a survey of a treatment's harms, still read."""
    reader = StudyReader("Which treatments reduce fatigue in long COVID?")
    biomarker = study(
        "RESULTS: Serum serotonin was 43% lower in long COVID than in recovered controls and correlated with "
        "fatigue severity (r=-0.38).",
        title="[DEMO] Reduced circulating serotonin after SARS-CoV-2 infection is associated with fatigue",
    )
    reading = reader.read(biomarker)
    assert reading.direction is None
    assert reading.other_outcome is not None
    trial = study(
        "RESULTS: Fatigue improved more with rehabilitation than with usual care (difference 4.2 points, 95% CI 2.1 "
        "to 6.3; p<0.001).",
        title="Rehabilitation with pacing versus usual care for fatigue in long COVID: a randomised trial",
    )
    assert reader.read(trial).direction == "favourable"
    harms = study(
        "RESULTS: Fatigue worsened after graded exercise therapy in 74.5% of respondents (p<0.001).",
        title="Symptom exacerbation after graded exercise therapy in long COVID: a survey",
    )
    assert reader.read(harms).direction == "unfavourable"
    # The same biomarker study on a question that names its intervention is read as before.
    assert StudyReader("Does serotonin reduce fatigue in long COVID?").read(biomarker).direction is not None


def test_an_associated_condition_is_no_association_question() -> None:
    """A new user's "Does rosuvastatin reduce mortality in sepsis-associated ARDS?" was read as a question about
    an association (its "associated" is the condition's name), so its two null studies were not weighed and the
    stance model answered "yes" (0.48 against 0.47), resting on an atorvastatin trial and a heart-failure page."""
    assert asks_effect("Does rosuvastatin reduce mortality in sepsis-associated ARDS?")
    assert asks_effect("Does chlorhexidine prevent ventilator-associated pneumonia?")
    assert asks_effect("Does metformin lower HbA1c in newly diagnosed type 2 diabetes?")
    assert asks_effect("Does early mobilisation reduce ICU-related weakness?")
    assert not asks_effect("Is statin use associated with lower mortality in sepsis?")
    assert not asks_effect("Does vitamin D deficiency predict a higher risk of fractures?")


def test_a_trial_in_another_subtype_of_the_condition_answers_only_indirectly() -> None:
    """A new user's: on a question about heart failure with preserved ejection fraction, the HFrEF trial (HR 0.74)
    counted as directly as the HFpEF one. A study naming the question's own subtype (a pooled analysis of both)
    stays direct, and a question naming no subtype, or both, makes no study indirect by its subtype."""
    question = "Do SGLT2 inhibitors reduce hospitalisation in heart failure with preserved ejection fraction?"
    reader = StudyReader(question)
    result = (
        "RESULTS: Hospitalisation for heart failure was lower with dapagliflozin than placebo (HR 0.70, 0.6 to 0.8)."
    )
    reduced = study(result, title="Dapagliflozin in patients with heart failure and reduced ejection fraction")
    pooled = study(result, title="SGLT2 inhibitors in HFrEF and HFpEF: a pooled analysis of trials")
    assert reader.other_people(reduced) == "people with reduced ejection fraction"
    assert not reader.read(reduced).direct
    assert reader.other_people(pooled) is None
    assert (
        reader.other_people(study(result, title="Empagliflozin in heart failure with preserved ejection fraction"))
        is None
    )
    assert StudyReader("Do SGLT2 inhibitors reduce hospitalisation in heart failure?").other_people(reduced) is None
    assert other_subtype("Is metformin safe in type 2 diabetes?", "Metformin in T1D: a trial") == "type 1 diabetes"
    assert other_subtype("Is metformin safe in type 1 or type 2 diabetes?", "Metformin in T1D: a trial") is None
    # "Mildly reduced" ejection fraction is not the reduced subtype.
    assert other_subtype(question, "Dapagliflozin in heart failure with mildly reduced ejection fraction") is None


def test_a_primary_measure_named_by_a_hyphenated_abbreviation_of_the_outcome_is_the_trials_result() -> None:
    """A new user's watch baseline of "Does vitamin D supplementation prevent or treat depression?": the treatment
    trial in major depression (primary outcome "the change in BDI-II score", defined as the Beck Depression
    Inventory-II; "BDI-II scores fell ... (difference -4.7, 95% CI -7.9 to -1.5; p=0.004)") read "no clear result",
    from a conclusion the reader was unsure of. "BDI-II" names depression as "AF" names atrial fibrillation, so the
    sentence stating the primary measure is the trial's reading: favourable."""
    reader = StudyReader("Does vitamin D supplementation prevent or treat depression?")
    trial = study(
        "METHODS: Outpatients with major depressive disorder (MDD), a Beck Depression Inventory-II (BDI-II) score of "
        "20 or more and low vitamin D were randomised to vitamin D3 50,000 IU weekly or placebo for 8 weeks. The "
        "primary outcome was the change in BDI-II score. RESULTS: Serum 25(OH)D rose from 31 to 92 nmol/L with "
        "vitamin D and was unchanged with placebo. BDI-II scores fell by 8.1 points with vitamin D and by 3.4 points "
        "with placebo (difference -4.7, 95% CI -7.9 to -1.5; p=0.004). CONCLUSIONS: In vitamin D-deficient patients "
        "with MDD, adjunctive high-dose vitamin D3 improved depressive symptoms over 8 weeks.",
        title="Adjunctive high-dose vitamin D3 in major depressive disorder: a randomised trial",
    )
    reading = reader.read(trial)
    assert reading.sentence is not None
    assert reading.sentence.startswith("BDI-II scores fell")
    assert reading.direction == "favourable"


def test_a_reviews_background_sentence_is_not_its_result() -> None:
    """Issue 23: background is never a result. A safety review opens with why the question is asked; the
    sentence names the question's disease, but says how the drug may come to be used, not what anyone found."""
    reader = StudyReader("Could metformin slow Alzheimer's disease?")
    review = study(
        "Interest in metformin as a candidate treatment for Alzheimer's disease means it may be given to older "
        "people without diabetes, a population in whom its safety has been studied less. Gastrointestinal adverse "
        "effects affect 20-30% of new users and are reduced by extended-release formulations.",
        title="Safety of metformin in older adults: a narrative review",
    )
    reading = reader.read(review)
    assert reading.direction is None
    assert all("Interest in" not in unit.text for unit in reading.reading.evidence)


def test_a_result_followed_by_may_be_used_advice_is_still_the_studys_result() -> None:
    """Background and may-be-used wording is not a result only when it comes before any: a conclusion that states
    its finding first and then advises ("... lower risk of dementia (HR 0.76 ...) and may be considered in their
    care") states the study's result, and was dropped (the study then read no result at all)."""
    reader = StudyReader("Does metformin reduce the risk of dementia in older adults with diabetes?")
    text = (
        "RESULTS: We followed 14,000 adults aged 65 years or older for a median of 6 years. Gastrointestinal "
        "adverse events were reported by 12% of metformin users and 5% of sulfonylurea users. CONCLUSIONS: "
        "Metformin use was associated with a significantly lower risk of dementia than sulfonylurea use (HR 0.76, "
        "95% CI 0.65 to 0.89) and may be considered in their care."
    )
    reading = reader.read(study(text, title="Metformin and dementia in older adults with diabetes: a cohort study"))
    assert reading.direction == "favourable"
    # Background that only names a risk before its may-be-used wording is still background.
    assert NOT_A_RESULT.search("Given the high risk of dementia in diabetes, metformin may be used in older people.")
    assert reading.sentence is not None
    assert reading.sentence.startswith("Metformin use was associated")


def test_a_methods_and_results_label_holds_the_studys_result() -> None:
    """A PubMed abstract labelled as Circulation's are ("METHODS AND RESULTS:") read no result: the label was taken
    for methods, and every sentence under it set aside."""
    reader = StudyReader("Does dapagliflozin reduce mortality in heart failure?")
    text = (
        "BACKGROUND: Dapagliflozin lowers glucose. METHODS AND RESULTS: We randomised 4744 patients with heart "
        "failure. Death from any cause occurred in 276 patients (11.6%) in the dapagliflozin group and 329 (13.9%) "
        "in the placebo group (hazard ratio 0.83; 95% CI 0.71 to 0.97). CONCLUSIONS: Further work is needed."
    )
    reading = reader.read(study(text, title="Dapagliflozin in heart failure: a randomised trial"))
    assert reading.direction == "favourable"
    assert reading.sentence is not None
    assert reading.sentence.startswith("Death from any cause")


def trial(text: str, title: str) -> EvidenceView:
    return EvidenceView(
        id="pmid:2",
        title=title,
        source="library",
        date="2020",
        text=text,
        design="randomized_controlled_trial",
        level=2,
    )


def test_a_sentence_saying_what_a_trial_measured_is_not_its_result() -> None:
    """ "The primary endpoint was ...", "... were compared between arms using ...": methods, read before as no
    difference; the trial's result is the sentence that compares the arms."""
    reader = StudyReader("Does zolentide reduce the risk of migraine attacks compared with placebo?")
    reading = reader.read(
        trial(
            "We randomly assigned 600 adults with episodic migraine to zolentide or placebo. The primary endpoint was "
            "the risk of migraine attacks over 12 weeks (attacks confirmed by diary). Analyses were by intention to "
            "treat. 58 of 300 adults given zolentide and 101 of 300 given placebo had migraine attacks (hazard ratio "
            "0.52, 95% CI 0.38 to 0.71, p<0.001).",
            "Zolentide for migraine prevention: a randomised trial",
        )
    )
    assert (reading.direction, reading.reading.label) == ("favourable", "decreased")
    assert (reading.sentence or "").startswith("58 of 300")


def test_a_background_sentence_states_no_null_result() -> None:
    """A sentence on why the question is asked ("their benefit on pain remains debated") names no lack of
    difference: no words of one, no statistic, no figure per arm. The study's result is its comparison."""
    reader = StudyReader("Does wrist splinting reduce hand pain compared with no splint?")
    reading = reader.read(
        trial(
            "Splints are widely prescribed for hand osteoarthritis, and their benefit on pain remains debated. We "
            "randomised 120 adults to a wrist splint or no splint. Hand pain and grip strength were compared between "
            "arms using visual analogue scales at six weeks. Pain was lower with the splint than without it (mean "
            "difference -1.8 points, 95% CI -2.6 to -1.0).",
            "Wrist splinting in hand osteoarthritis",
        )
    )
    assert (reading.direction, reading.reading.label) == ("favourable", "decreased")
    only_background = reader.read(
        trial(
            "Splints are widely prescribed for hand osteoarthritis, and their benefit on pain remains debated.",
            "Wrist splinting in hand osteoarthritis: a narrative overview",
        )
    )
    assert only_background.direction is None


def test_a_typeset_hyphen_in_a_name_asks_no_association() -> None:
    """ "work‐related injury" (U+2010) names an outcome, as "work-related injury" does: the question asks an
    effect, which the counted studies answer, not an association for the stance model."""
    assert asks_effect("Does remote triage increase the rate of work\u2010related injury compared with usual care?")
    assert asks_effect("Does remote triage increase the rate of work-related injury compared with usual care?")
    assert not asks_effect("Is shift work related to injury?")


def test_a_studys_aim_is_not_its_result() -> None:
    """ "To investigate whether ... increases healing rates" names the effect sought, not the one found (read
    before as an increase)."""
    reader = StudyReader("Does laser therapy increase ulcer healing compared with sham?")
    reading = reader.read(
        trial(
            "To investigate whether low-level laser therapy increases venous ulcer healing rates and prevents "
            "recurrence. Eighty adults were randomised to laser therapy or sham. There were no significant "
            "between-group differences in healing rates.",
            "Low-level laser therapy for venous ulcers",
        )
    )
    assert (reading.direction, reading.reading.label) == ("null", "no_difference")
