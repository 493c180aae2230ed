"""What a record's own labels say: its publication types (PubMed, Europe PMC) and MeSH headings, read into
a design, a phase, a retraction and a population."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from deepcritical.models import Population, StudyDesign
from deepcritical.text import collapse_whitespace
from deepcritical.vocabulary import DESIGN_PRECEDENCE

# Which design wins when a record carries several types: the vocabulary's order.
_PRECEDENCE = DESIGN_PRECEDENCE
# PubMed publication types (and the JATS article types Europe PMC reports for full-text records),
# lower-cased with hyphens as spaces. Types that say nothing about design ("Journal Article",
# "Research Support, ...", "Comparative Study", "Multicenter Study") are absent on purpose.
PUBLICATION_TYPE_DESIGNS: dict[str, StudyDesign] = {
    "preprint": "preprint",
    "meta analysis": "meta_analysis",
    "network meta analysis": "meta_analysis",
    "systematic review": "systematic_review",
    "randomized controlled trial": "randomized_controlled_trial",
    "randomized controlled trial, veterinary": "randomized_controlled_trial",
    "equivalence trial": "randomized_controlled_trial",
    "pragmatic clinical trial": "randomized_controlled_trial",
    "clinical trial": "clinical_trial",
    "clinical trial, phase i": "clinical_trial",
    "clinical trial, phase ii": "clinical_trial",
    "clinical trial, phase iii": "clinical_trial",
    "clinical trial, phase iv": "clinical_trial",
    "controlled clinical trial": "clinical_trial",
    "adaptive clinical trial": "clinical_trial",
    "clinical study": "clinical_trial",
    "clinical trial, veterinary": "clinical_trial",
    "observational study": "observational",
    "observational study, veterinary": "observational",
    "twin study": "observational",
    "case reports": "case_report",
    "case report": "case_report",
    "guideline": "guideline",
    "practice guideline": "guideline",
    "consensus development conference": "guideline",
    "consensus development conference, nih": "guideline",
    "review": "narrative_review",
    "review article": "narrative_review",
    "scoping review": "narrative_review",
    "editorial": "editorial_or_letter",
    "letter": "editorial_or_letter",
    "comment": "editorial_or_letter",
    "news": "editorial_or_letter",
    "newspaper article": "editorial_or_letter",
    "interview": "editorial_or_letter",
    "lecture": "editorial_or_letter",
    "address": "editorial_or_letter",
    "personal narrative": "editorial_or_letter",
    "biography": "editorial_or_letter",
    "historical article": "editorial_or_letter",
    "published erratum": "editorial_or_letter",
    "retraction of publication": "editorial_or_letter",
    "expression of concern": "editorial_or_letter",
    "correction": "editorial_or_letter",
    "retraction": "editorial_or_letter",
}
RETRACTED_TYPE = "retracted publication"
_PHASE_TYPES = {"clinical trial, phase i": "1", "clinical trial, phase ii": "2", "clinical trial, phase iii": "3"}
_PHASE_TYPES["clinical trial, phase iv"] = "4"

# MeSH descriptors that name a design (not the "X as Topic" ones: those say what an article is about).
MESH_DESIGNS: dict[str, StudyDesign] = {
    "random allocation": "randomized_controlled_trial",
    "cohort studies": "cohort",
    "prospective studies": "cohort",
    "longitudinal studies": "cohort",
    "follow-up studies": "cohort",
    "case-control studies": "case_control",
    "cross-sectional studies": "cross_sectional",
    "retrospective studies": "observational",
    "registries": "observational",
    "health surveys": "cross_sectional",
}
_MESH_ANIMAL = re.compile(
    r"^(?:animals|mice|mice, .+|rats|rats, .+|disease models, animal|zebrafish|drosophila.*|caenorhabditis.*"
    r"|rabbits|dogs|swine|sheep|cattle|primates|macaca.*|cricetinae|guinea pigs|models, animal"
    r"|fishes|cyprinidae|oryzias|oncorhynchus.*|salmo.*|xenopus.*|chickens|cats|horses|goats)$"
)
_MESH_CELLS = re.compile(
    r"^(?:cells, cultured|cell line|cell line, .+|in vitro techniques|cell culture techniques|organoids"
    r"|(?:hela|hek293|hep g2|caco-2|pc12|jurkat|mcf-7|3t3|cos|cho|vero|hl-60|k562|thp-1|u937|a549|ht29|raw 264\.7)"
    r" cells)$"
)

# --- Text ---


def _normal(text: str) -> str:
    return collapse_whitespace(text.replace("-", " ").lower())


def _first_by_precedence(designs: Iterable[StudyDesign]) -> StudyDesign | None:
    found = set(designs)
    return next((design for design in _PRECEDENCE if design in found), None)


def design_from_publication_types(types: Sequence[str]) -> StudyDesign | None:
    normal = [_normal(kind) for kind in types]
    return _first_by_precedence(design for kind in normal if (design := PUBLICATION_TYPE_DESIGNS.get(kind)) is not None)


def phase_from_publication_types(types: Sequence[str]) -> str | None:
    phases = [_PHASE_TYPES[kind] for kind in (_normal(t) for t in types) if kind in _PHASE_TYPES]
    return "/".join(sorted(set(phases))) if phases else None


def is_retracted(types: Sequence[str]) -> bool:
    """The record carries PubMed's ``Retracted Publication`` type (the notice itself does not)."""
    return any(_normal(kind) == RETRACTED_TYPE for kind in types)


def design_from_mesh(headings: Sequence[str]) -> StudyDesign | None:
    return _first_by_precedence(
        design for heading in headings if (design := MESH_DESIGNS.get(heading.strip().lower())) is not None
    )


def population_from_mesh(headings: Sequence[str]) -> Population:
    """``Humans`` and ``Animals`` are check tags every MEDLINE record gets when they apply. A record that
    studies cells only (cell lines, cultured cells) and no whole organism is in vitro, whatever their origin."""
    lowered = [heading.strip().lower() for heading in headings]
    humans = "humans" in lowered
    animals = any(_MESH_ANIMAL.match(heading) for heading in lowered)
    cells = any(_MESH_CELLS.match(heading) for heading in lowered)
    if animals and not humans:
        return "animals"
    if cells and not animals and not _mesh_names_a_clinical_design(lowered):
        return "in_vitro"
    if humans:
        return "humans"
    return "unknown"


def _mesh_names_a_clinical_design(lowered: Sequence[str]) -> bool:
    return any(heading in MESH_DESIGNS for heading in lowered)
