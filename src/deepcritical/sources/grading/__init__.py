"""Grading evidence: study design, level of evidence (OCEBM 2011) and population, in pure functions.

The design is read, in order, from what is most reliable: the record's publication types (PubMed's
``PublicationType``, Europe PMC's ``pubTypeList``), then its MeSH headings, then its title and
abstract (new records get their types months late), then the source itself (a registry entry, a web
page). The population comes from MeSH check tags (``Humans``, ``Animals``) first, then the text. The
scale and its sources are written down in ``phases/07_grading.md``. No I/O here: text in, Grade out.

The package, by concern: ``vocabulary`` (publication types and MeSH), ``wording`` (title and abstract),
``sample`` (how many people), ``grade`` (the grade from all of them, and its level).
"""

from deepcritical.sources.grading.grade import (
    OCEBM_LEVEL,
    grade_record,
    grade_registration,
    grade_web,
    registry_phase,
)
from deepcritical.sources.grading.sample import sample_size
from deepcritical.sources.grading.vocabulary import (
    design_from_mesh,
    design_from_publication_types,
    is_retracted,
    phase_from_publication_types,
    population_from_mesh,
)
from deepcritical.sources.grading.wording import design_from_text, phase_from_text, population_from_text
from deepcritical.vocabulary import HUMAN_DESIGNS

__all__ = [
    "HUMAN_DESIGNS",
    "OCEBM_LEVEL",
    "design_from_mesh",
    "design_from_publication_types",
    "design_from_text",
    "grade_record",
    "grade_registration",
    "grade_web",
    "is_retracted",
    "phase_from_publication_types",
    "phase_from_text",
    "population_from_mesh",
    "population_from_text",
    "registry_phase",
    "sample_size",
]
