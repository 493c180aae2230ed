"""The grade of a record, a web page or a registry entry: the design from the most reliable place that
states it, its OCEBM 2011 level, the population and the sample size."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from deepcritical.models import DESIGNS, DOI_PATTERN, Grade, GradeBasis, Population, StudyDesign
from deepcritical.sources.grading.sample import sample_size
from deepcritical.sources.grading.vocabulary import (
    design_from_mesh,
    design_from_publication_types,
    phase_from_publication_types,
    population_from_mesh,
)
from deepcritical.sources.grading.wording import (
    design_from_text,
    phase_from_text,
    population_from_text,
    reviews_only_observational,
)
from deepcritical.vocabulary import HUMAN_DESIGNS, LAB_POPULATIONS

# OCEBM 2011 levels, from the one list of designs (``models.DESIGNS``).
OCEBM_LEVEL: dict[StudyDesign, int | None] = {name: design.level for name, design in DESIGNS.items()}
# A review that pooled only observational studies sits at the level of what it pooled (OCEBM 2011: "a
# systematic review is generally better than an individual study", within the level of its studies).
_OBSERVATIONAL_REVIEW_LEVEL = 3


@dataclass(frozen=True)
class _Found:
    design: StudyDesign
    basis: GradeBasis


def _level(design: StudyDesign, title: str, text: str) -> int | None:
    if design in ("meta_analysis", "systematic_review") and reviews_only_observational(f"{title} {text}"):
        return _OBSERVATIONAL_REVIEW_LEVEL
    return OCEBM_LEVEL[design]


def grade_record(
    *,
    title: str,
    text: str,
    publication_types: Sequence[str] = (),
    mesh_headings: Sequence[str] = (),
) -> Grade:
    """The grade of a bibliographic record (PubMed, Europe PMC): publication types, then MeSH, then the
    title and abstract. A design read from the text or MeSH in a record whose subjects are animals or
    cells becomes ``preclinical``."""
    population: Population = population_from_mesh(mesh_headings)
    population_basis: GradeBasis = "mesh"
    if population == "unknown":
        population, population_basis = population_from_text(title, text), "text"
    found: _Found | None = None
    if (design := design_from_publication_types(publication_types)) is not None:
        found = _Found(design, "publication_type")
    elif (design := design_from_mesh(mesh_headings)) is not None:
        found = _Found(design, "mesh")
    elif (design := design_from_text(title, text)) is not None:
        found = _Found(design, "text")
    if found is not None and found.design == "observational":
        found = _observational_subtype(found, title, text, mesh_headings)
    if population in LAB_POPULATIONS and (
        found is None or (found.basis != "publication_type" and found.design in HUMAN_DESIGNS)
    ):
        found = _Found("preclinical", population_basis)
    if found is None:
        return Grade(population=population, sample_size=_size(population, f"{title}. {text}"))
    if found.basis == "publication_type" and found.design in HUMAN_DESIGNS and population == "unknown":
        population = "humans"  # PubMed types these for studies in people; animal studies have "Veterinary" ones
    phase = phase_from_publication_types(publication_types) or (
        phase_from_text(f"{title} {text}")
        if found.design in ("randomized_controlled_trial", "clinical_trial")
        else None
    )
    return Grade(
        design=found.design,
        level=_level(found.design, title, text),
        population=population,
        basis=found.basis,
        phase=phase,
        sample_size=_size(population, f"{title}. {text}", found.design),
    )


_OBSERVATIONAL_SUBTYPES: frozenset[StudyDesign] = frozenset({"cohort", "case_control", "cross_sectional"})


def _observational_subtype(found: _Found, title: str, text: str, mesh_headings: Sequence[str]) -> _Found:
    """PubMed's ``Observational Study`` type names the family only; MeSH, then the text, say which kind
    (cohort, case-control, cross-sectional), and whichever says so becomes the basis."""
    if (design := design_from_mesh(mesh_headings)) in _OBSERVATIONAL_SUBTYPES:
        return _Found(design, "mesh")
    if (design := design_from_text(title, text)) in _OBSERVATIONAL_SUBTYPES:
        return _Found(design, "text")
    return found


def _size(population: Population, text: str, design: StudyDesign | None = None) -> int | None:
    """A study's participants; reviews, guidelines and letters have none of their own."""
    if population != "humans" or (design is not None and design not in HUMAN_DESIGNS):
        return None
    return sample_size(text, design)


# Hosts whose pages are journal articles or bibliographic records of them (PubMed, PMC, Europe PMC and the
# large biomedical publishers): a hit there is the study's own text, not a page about it.
_ARTICLE_HOSTS = (
    "ncbi.nlm.nih.gov",  # and its subdomains: pubmed., pmc. (``_on_host`` matches them)
    "europepmc.org",
    "doi.org",
    "nejm.org",
    "thelancet.com",
    "jamanetwork.com",
    "bmj.com",
    "nature.com",
    "sciencedirect.com",
    "cell.com",
    "springer.com",
    "biomedcentral.com",
    "wiley.com",
    "academic.oup.com",
    "tandfonline.com",
    "sagepub.com",
    "karger.com",
    "journals.plos.org",
    "frontiersin.org",
    "mdpi.com",
    "cochranelibrary.com",
    "ahajournals.org",
    "acpjournals.org",
    "jci.org",
)
# Preprint servers: an article there is a preprint whatever design its text states (Europe PMC's rule too).
_PREPRINT_HOSTS = ("medrxiv.org", "biorxiv.org", "researchsquare.com", "preprints.org", "ssrn.com")
_PREPRINT_DOI = re.compile(r"^10\.1101/")  # Cold Spring Harbor's prefix: medRxiv and bioRxiv
# A title that names its design as a journal article does ("...: a randomised controlled trial"); a news
# headline says "trial finds", "in placebo-controlled trial", and stays a web page.
_ARTICLE_TITLE = re.compile(
    r"\brandomi[sz]ed,?\s+(?:[\w-]+,?\s+){0,3}?controlled\s+trial\b"
    r"|:\s*(?:an?\s+)?(?:[\w,-]+\s+){0,6}?(?:randomi[sz]ed\b.*\btrial|meta-?analysis|systematic review)\b",
    re.IGNORECASE,
)


def _on_host(url: str, hosts: Sequence[str]) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return any(host == known or host.endswith(f".{known}") for known in hosts)


def is_journal_article(title: str, url: str, doi: str | None = None) -> bool:
    """Whether a web hit is a journal article rather than a page about one: it carries its DOI (beside the
    URL, as scholarly engines give it, or in the URL's path), it is on a journal's or PubMed's host, or its
    title names its design as an article's does. A DOI in the page's text is not enough: news pages cite
    the paper they report, and a news page is no second reading of that paper."""
    if doi or DOI_PATTERN.search(urlsplit(url).path) or _on_host(url, (*_ARTICLE_HOSTS, *_PREPRINT_HOSTS)):
        return True
    return bool(_ARTICLE_TITLE.search(title))


def grade_web(title: str, text: str, url: str = "", doi: str | None = None) -> Grade:
    """A web page is a web page whatever study it reports: outside the scale, population from its text. A
    hit that is a journal article (``is_journal_article``) is graded as a record is, by the design its
    title and text state (unknown when they state none): it is the study, not a page about it."""
    if is_journal_article(title, url, doi):
        grade = grade_record(title=title, text=text)
        if _on_host(url, _PREPRINT_HOSTS) or (doi and _PREPRINT_DOI.match(doi)):
            return grade.model_copy(update={"design": "preprint", "level": None, "basis": "source"})
        return grade
    population = population_from_text(title, text)
    return Grade(design="web", population=population, basis="source")


def grade_registration(phases: Sequence[str], enrollment: int | None) -> Grade:
    """A registry entry: outside the scale (a registration, not a result), in humans, with the registry's
    phase and enrolment."""
    return Grade(
        design="registered_trial",
        population="humans",
        basis="source",
        phase=registry_phase(phases),
        sample_size=enrollment if enrollment and enrollment > 0 else None,
    )


_REGISTRY_PHASES = {"EARLY_PHASE1": "early 1", "PHASE1": "1", "PHASE2": "2", "PHASE3": "3", "PHASE4": "4"}


def registry_phase(phases: Sequence[str]) -> str | None:
    """ClinicalTrials.gov's ``["PHASE2", "PHASE3"]`` as "2/3"; ``NA`` (not a drug trial) as None."""
    named = [_REGISTRY_PHASES[phase] for phase in phases if phase in _REGISTRY_PHASES]
    return "/".join(named) if named else None
