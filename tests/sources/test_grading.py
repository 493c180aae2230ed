"""The grader: publication types first, then MeSH, then the text, then the source; population from MeSH
check tags, then the text; the OCEBM 2011 level that follows from the design."""

from __future__ import annotations

from typing import get_args

import pytest

from deepcritical.models import DESIGNS, Grade, StudyDesign
from deepcritical.sources.grading import (
    HUMAN_DESIGNS,
    OCEBM_LEVEL,
    design_from_publication_types,
    design_from_text,
    grade_record,
    grade_registration,
    grade_web,
    is_retracted,
    phase_from_text,
    population_from_mesh,
    population_from_text,
    registry_phase,
    sample_size,
)

TRIAL_ABSTRACT = (
    "BACKGROUND: Drug X may slow decline. METHODS: Eighty adults with mild cognitive impairment were randomised "
    "1:1 to drug X or placebo for 12 months. RESULTS: Recall improved more with drug X (p=0.03). "
    "CONCLUSIONS: Drug X modestly improved recall."
)
MOUSE_ABSTRACT = (
    "Tau pathology drives neurodegeneration. Transgenic mice (n=14 per group) received drug X for 4 months; "
    "cohorts of mice were randomised to drug or vehicle. Drug X lowered phospho-tau in the hippocampus of mice."
)


@pytest.mark.parametrize(
    ("types", "design"),
    [
        (["Journal Article", "Meta-Analysis", "Systematic Review"], "meta_analysis"),
        (["Review", "Systematic Review"], "systematic_review"),
        (["Journal Article", "Randomized Controlled Trial", "Clinical Trial, Phase II"], "randomized_controlled_trial"),
        (["Clinical Trial, Phase I"], "clinical_trial"),
        (["Observational Study", "Multicenter Study"], "observational"),
        (["Case Reports"], "case_report"),
        (["Practice Guideline"], "guideline"),
        (["Journal Article", "Review"], "narrative_review"),
        (["Comment", "Letter"], "editorial_or_letter"),
        (["Preprint", "Randomized Controlled Trial"], "preprint"),
        (["review-article"], "narrative_review"),  # a JATS article type, as Europe PMC gives for full text
        (["Journal Article", "Research Support, Non-U.S. Gov't", "Comparative Study"], None),
    ],
)
def test_publication_types_name_the_design_with_the_strongest_first(types: list[str], design: str | None) -> None:
    assert design_from_publication_types(types) == design


def test_publication_types_decide_before_mesh_and_text() -> None:
    grade = grade_record(
        title="A cohort study of drug X",
        text=TRIAL_ABSTRACT,
        publication_types=["Journal Article", "Randomized Controlled Trial", "Clinical Trial, Phase II"],
        mesh_headings=["Cohort Studies", "Humans"],
    )
    assert grade == Grade(
        design="randomized_controlled_trial",
        level=2,
        population="humans",
        basis="publication_type",
        phase="2",
        sample_size=80,
    )
    assert grade.label == "randomised controlled trial (phase 2), humans, n = 80"


def test_mesh_decides_when_the_types_say_nothing_and_the_text_last() -> None:
    by_mesh = grade_record(
        title="Drug X and dementia", text="We followed users.", mesh_headings=["Case-Control Studies", "Humans", "Aged"]
    )
    assert (by_mesh.design, by_mesh.basis, by_mesh.level, by_mesh.population) == ("case_control", "mesh", 4, "humans")
    by_text = grade_record(title="Drug X in adults: a prospective cohort study", text="We followed 4,112 adults.")
    assert (by_text.design, by_text.basis, by_text.level, by_text.sample_size) == ("cohort", "text", 3, 4112)


def test_the_observational_family_is_refined_by_mesh_then_text() -> None:
    refined = grade_record(
        title="B12 and cognition in drug X users: a cross-sectional study",
        text="We measured B12 in 1,114 older adults.",
        publication_types=["Observational Study"],
    )
    assert (refined.design, refined.basis, refined.level) == ("cross_sectional", "text", 4)
    by_mesh = grade_record(
        title="Drug X users", text="...", publication_types=["Observational Study"], mesh_headings=["Cohort Studies"]
    )
    assert (by_mesh.design, by_mesh.basis) == ("cohort", "mesh")
    plain = grade_record(
        title="Drug X users", text="Patients were observed.", publication_types=["Observational Study"]
    )
    assert (plain.design, plain.basis, plain.level) == ("observational", "publication_type", 3)


def test_animal_and_cell_studies_are_preclinical_and_outside_the_scale() -> None:
    mice = grade_record(title="Drug X lowers tau phosphorylation in transgenic mice", text=MOUSE_ABSTRACT)
    assert (mice.design, mice.population, mice.level, mice.basis, mice.sample_size) == (
        "preclinical",
        "animals",
        None,
        "text",
        None,
    )
    by_mesh = grade_record(
        title="Drug X and tau", text=TRIAL_ABSTRACT, mesh_headings=["Animals", "Mice", "tau Proteins"]
    )
    assert (by_mesh.design, by_mesh.population, by_mesh.basis) == ("preclinical", "animals", "mesh")
    cells = grade_record(
        title="Calcitriol regulates serotonin synthesis in human neuronal cells",
        text="SH-SY5Y cells were treated with calcitriol.",
        mesh_headings=["Humans", "Cell Line, Tumor", "Serotonin"],
    )
    assert (cells.design, cells.population) == ("preclinical", "in_vitro")


def test_a_reviews_level_follows_what_it_pooled() -> None:
    of_cohorts = grade_record(
        title="Drug X and dementia: a systematic review and meta-analysis of 18 cohort studies",
        text="We searched four databases for cohort and case-control studies. Randomised trials are needed.",
        publication_types=["Meta-Analysis"],
    )
    assert of_cohorts.level == 3
    of_trials = grade_record(
        title="Drug X for sepsis: a meta-analysis",
        text="We pooled 12 randomised controlled trials and 20 cohort studies.",
        publication_types=["Meta-Analysis"],
    )
    assert of_trials.level == 1


@pytest.mark.parametrize(
    ("title", "text", "design"),
    [
        ("Drug X and depression: a systematic review and meta-analysis", "", "meta_analysis"),
        ("Genetically predicted vitamin D and depression: a Mendelian randomisation study", "", "observational"),
        ("L4 spondylectomy for giant cell tumor: a case report and review of the literature", "", "case_report"),
        ("Majocchi's granuloma in a kidney transplant recipient.", "", "case_report"),
        ("Keratoconus: recent advances and future directions", "", "narrative_review"),
        (
            "Drug X in heart failure",
            "In this double-blind trial, 300 patients were randomly assigned to X.",
            "randomized_controlled_trial",
        ),
        (
            "Drug X in heart failure",
            "Earlier randomized trials were small. We studied 2,000 patients retrospectively.",
            "observational",
        ),
        (
            "Drug X in heart failure",
            "This open-label, single-arm phase 2 study enrolled 40 patients.",
            "clinical_trial",
        ),
        ("Hemodynamic monitoring in shock", "PURPOSE OF REVIEW: Shock remains common.", "narrative_review"),
        ("Drug X and the kidney", "Kidneys filter blood.", None),
    ],
)
def test_the_text_names_designs_from_the_title_then_method_statements(
    title: str, text: str, design: str | None
) -> None:
    assert design_from_text(title, text) == design


def test_population_from_mesh_check_tags() -> None:
    assert population_from_mesh(["Humans", "Aged"]) == "humans"
    assert population_from_mesh(["Animals", "Mice, Transgenic"]) == "animals"
    assert population_from_mesh(["Humans", "Animals", "Mice"]) == "humans"  # both: evidence in people
    assert population_from_mesh(["Cells, Cultured", "HeLa Cells", "Humans"]) == "in_vitro"
    assert population_from_mesh(["Humans", "Cohort Studies", "Cell Line"]) == "humans"
    assert population_from_mesh(["Metformin"]) == "unknown"


def test_population_from_text() -> None:
    assert population_from_text("Drug X in APP/PS1 mice", "Patients with AD were not studied.") == "animals"
    assert population_from_text("Drug X and tau", MOUSE_ABSTRACT) == "animals"
    assert population_from_text("Drug X and memory", TRIAL_ABSTRACT) == "humans"
    assert population_from_text("Drug X and BACE1", "N2a cell lines were cultured with drug X in vitro.") == "in_vitro"
    assert population_from_text("Drug X", "Drug X is a molecule.") == "unknown"


@pytest.mark.parametrize(
    ("text", "n"),
    [
        (
            "Eighty adults aged 55-85 years with amnestic MCI were randomised 1:1. Seventy-one participants completed.",
            80,
        ),
        ("One hundred and twenty outpatients with MDD were randomised to vitamin D or placebo.", 120),
        ("Patients received vitamin D3 (14,000 IU/day; n = 30) or placebo (n = 23) for 48 weeks.", 53),
        ("Of 1,234 patients screened, 80 patients were randomized.", 80),
        ("The trial was stopped after 745 of a planned 1,000 patients had been enrolled.", None),
        ("We included 41 placebo-controlled trials (53,235 participants).", 53235),
        ("Mice (n=14 per group) received drug X.", None),
        ("In 2019 patients were recruited from clinics.", None),
    ],
)
def test_sample_size_is_read_when_the_abstract_states_it(text: str, n: int | None) -> None:
    assert sample_size(text) == n


@pytest.mark.parametrize(
    ("text", "design", "n"),
    [
        # A review of trials contrasted with observational data: its n is the trials' patients.
        (
            "Nine RCTs (2,275 patients) showed no effect on mortality. Twenty-seven observational studies "
            "(over 400,000 patients) gave a pooled adjusted OR of 0.65.",
            "meta_analysis",
            2275,
        ),
        (
            "We pooled 12 randomised trials (4,100 participants) and 400,000 patients in observational cohorts.",
            "meta_analysis",
            4100,
        ),
        (
            "Trials enrolled 3,000 patients; registry data covered 250,000 patients.",
            "systematic_review",
            3000,
        ),
        # A meta-analysis of randomised trials only: a count of records is not its participants.
        ("A meta-analysis of randomised trials; claims records of 90,000 patients were also screened.", None, None),
        # A cohort study's own count stands even beside a trial's.
        (
            "We followed a registry cohort of 50,000 patients. Earlier trials enrolled 300 patients.",
            "cohort",
            50000,
        ),
        # A meta-analysis of cohorts keeps its participants.
        (
            "Eighteen cohort studies (1,032,417 participants; 46,310 dementia cases) were included.",
            "meta_analysis",
            1032417,
        ),
    ],
)
def test_a_review_of_trials_counts_the_trials_patients_not_an_observational_count(
    text: str, design: StudyDesign | None, n: int | None
) -> None:
    assert sample_size(text, design) == n


def test_the_statins_meta_analysis_is_graded_by_its_randomised_patients() -> None:
    grade = grade_record(
        title="Statins for sepsis: a systematic review and meta-analysis of randomised trials contrasted with "
        "observational evidence",
        text="Nine RCTs (2,275 patients; atorvastatin, simvastatin and rosuvastatin) showed no effect on 28-day "
        "mortality (RR 0.98, 95% CI 0.84 to 1.14). Twenty-seven observational studies (over 400,000 patients) "
        "gave a pooled adjusted OR of 0.65 (0.57 to 0.75).",
        publication_types=["Meta-Analysis", "Systematic Review"],
    )
    assert grade.design == "meta_analysis"
    assert grade.sample_size == 2275


def test_reviews_and_letters_get_no_sample_size() -> None:
    review = grade_record(
        title="Drug X: a review", text="Trials in 5,000 patients are reviewed.", publication_types=["Review"]
    )
    assert review.design == "narrative_review"
    assert review.sample_size is None


def test_phase_from_text_and_registry() -> None:
    assert phase_from_text("a phase IIb trial") == "2"
    assert phase_from_text("a phase 2/3 study") == "2/3"
    assert phase_from_text("a phase III/IV study") == "3/4"
    assert phase_from_text("no phase given") is None
    assert registry_phase(["PHASE2", "PHASE3"]) == "2/3"
    assert registry_phase(["EARLY_PHASE1"]) == "early 1"
    assert registry_phase(["NA"]) is None


def test_the_source_grades_registry_entries_and_web_pages() -> None:
    registration = grade_registration(["PHASE3"], 370)
    assert registration == Grade(
        design="registered_trial", population="humans", basis="source", phase="3", sample_size=370
    )
    assert registration.label == "trial registration (phase 3), humans, n = 370"
    web = grade_web("Metformin and memory in mice", "A study in mice found ...")
    assert (web.design, web.level, web.basis, web.population) == ("web", None, "source", "animals")


def test_retraction_is_read_from_the_retracted_publication_type_only() -> None:
    assert is_retracted(["Journal Article", "Retracted Publication"])
    assert not is_retracted(["Retraction of Publication"])  # the notice itself is not retracted


def test_every_design_has_a_stated_level_or_none() -> None:
    assert OCEBM_LEVEL["meta_analysis"] == OCEBM_LEVEL["systematic_review"] == 1
    assert OCEBM_LEVEL["randomized_controlled_trial"] == 2
    assert OCEBM_LEVEL["cohort"] == OCEBM_LEVEL["clinical_trial"] == 3
    assert OCEBM_LEVEL["case_control"] == OCEBM_LEVEL["case_report"] == 4
    assert OCEBM_LEVEL["narrative_review"] == 5
    assert all(OCEBM_LEVEL[d] is None for d in ("preclinical", "web", "registered_trial", "preprint", "unknown"))


def test_the_design_list_is_written_once() -> None:
    # Every StudyDesign name has its label, level and population in models.DESIGNS, and the grader reads
    # its levels and its human designs from there.
    assert list(DESIGNS) == list(get_args(StudyDesign))
    assert {name: design.level for name, design in DESIGNS.items()} == OCEBM_LEVEL
    assert {"randomized_controlled_trial", "case_report"} <= HUMAN_DESIGNS
    assert not HUMAN_DESIGNS & {"preclinical", "narrative_review", "web", "unknown"}


# --- a web hit that is a journal article is graded by its design (issue 23, round 4) ---

RCT_SNIPPET = "In 100 patients admitted with sepsis, atorvastatin 40 mg daily reduced progression (p=0.007)."


@pytest.mark.parametrize(
    ("title", "url", "doi"),
    [
        ("Atorvastatin in sepsis", "https://journal.example/doi/10.1234/abc.2012.08", None),  # DOI in the path
        ("Atorvastatin in sepsis", "https://link.example/article/10.1007/s00134-012-2", None),
        ("Atorvastatin in sepsis", "https://scholar.example/paper/7", "10.1234/abc"),  # a scholarly engine's DOI
        ("Atorvastatin in sepsis", "https://pubmed.ncbi.nlm.nih.gov/22000001/", None),
        ("Atorvastatin in sepsis", "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC3000001/", None),
        ("Atorvastatin in sepsis", "https://www.thelancet.com/journals/lancet/article/PIIS0140", None),
        ("Atorvastatin to prevent severe sepsis: a randomised controlled trial", "https://site.example/a", None),
        ("Atorvastatin in sepsis: randomised, placebo-controlled, double-blind trial", "https://site.example/b", None),
    ],
)
def test_a_web_hit_that_is_a_journal_article_is_graded_by_its_design(title: str, url: str, doi: str | None) -> None:
    text = f"{RCT_SNIPPET} METHODS: Patients were randomly assigned to atorvastatin or placebo."
    grade = grade_web(title, text, url, doi)
    assert (grade.design, grade.level, grade.basis) == ("randomized_controlled_trial", 2, "text")


def test_a_journal_article_stating_no_design_is_of_unknown_design_not_a_web_page() -> None:
    grade = grade_web("Statins and sepsis", "Statins were studied in sepsis.", "https://doi.org/10.1234/x")
    assert (grade.design, grade.level) == ("unknown", None)


def test_a_preprint_server_page_is_a_preprint_whatever_its_text_says() -> None:
    text = "Patients were randomly assigned to drug X or placebo; mortality fell (p=0.01)."
    for url, doi in (
        ("https://www.medrxiv.org/content/10.1101/2024.01.01.123v1", None),
        ("https://x.example/p", "10.1101/2024.01.02"),
    ):
        grade = grade_web("Drug X in sepsis: a randomised controlled trial", text, url, doi)
        assert (grade.design, grade.level, grade.basis) == ("preprint", None, "source")


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("Antiviral fails to relieve long COVID fatigue in placebo-controlled trial", RCT_SNIPPET),
        ("Drug X cuts deaths, randomised trial finds", f"{RCT_SNIPPET} The paper (doi:10.1234/abc) was published."),
        ("Vitamin D: the natural depression cure doctors don't talk about", "Buy now. Randomised trials prove it."),
    ],
)
def test_news_and_shop_pages_stay_web_pages_even_when_they_cite_a_doi_or_a_trial(title: str, text: str) -> None:
    assert grade_web(title, text, "https://news.example/2024/06/drug-x").design == "web"


def test_the_demo_corpus_pages_are_web_pages_unless_they_are_its_journal_article_pages() -> None:
    from deepcritical.demo.records import SearxngRecord, WebRecord, YouRecord, load_corpus

    pages = [r for r in load_corpus().records if isinstance(r, WebRecord | SearxngRecord | YouRecord)]
    assert len(pages) > 30
    for page in pages:
        # the demo's SearXNG puts a DOI beside a paper's URL only, as scholarly engines do (demo/searxng.py)
        doi = page.doi if isinstance(page, SearxngRecord) and page.template == "paper.html" else None
        article = "/doi/" in page.url
        assert (grade_web(page.title, page.text, page.url, doi).design != "web") == article, page.url


MINNOW_TITLE = "Metformin exposure alters reproduction in fathead minnows (Pimephales promelas)"
MINNOW_ABSTRACT = (
    "Metformin, an antidiabetic drug widely used by patients with type 2 diabetes, is among the pharmaceuticals "
    "most often found in surface waters. We exposed adult fathead minnows to metformin at 40 micrograms per litre "
    "for 28 days. Exposed male fish developed intersex gonads; fecundity was reduced by 31% compared with control "
    "fish (p = 0.02)."
)


@pytest.mark.parametrize("title", [MINNOW_TITLE, "Reproductive effects of metformin"])
def test_a_fish_study_is_graded_animals_not_humans(title: str) -> None:
    # The code grade (--no-llm, a library file without MeSH) reads the words: "patients" in the background
    # no longer outweighs the fish the study exposed.
    grade = grade_record(title=title, text=MINNOW_ABSTRACT)
    assert grade.population == "animals"
    assert grade.design == "preclinical"


def test_people_taking_fish_oil_are_still_humans() -> None:
    text = (
        "Fish oil capsules or placebo were given to 400 adults; fish intake was recorded. Participants were followed."
    )
    assert population_from_text("Fish oil supplementation in older adults", text) == "humans"


def test_thousands_grouped_by_a_space_are_one_number() -> None:
    # As JAMA and many European journals print them: "76 119" is 76,119, not 76 (a trial then looked tiny).
    text = "A total of 76 119 women were enrolled, and data for 19 213 women were analyzed."
    assert sample_size(text, "randomized_controlled_trial") == 76119
    assert sample_size("In all, 12\u2009480 adults were randomised.", "randomized_controlled_trial") == 12480
    assert sample_size("Between 2008 and 2010, 250 patients were randomised.", "randomized_controlled_trial") == 250
