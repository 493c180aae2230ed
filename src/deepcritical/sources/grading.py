"""Grading evidence: study design, level of evidence (OCEBM 2011) and population, in pure functions.

The design is read, in order, from what is most reliable: the record's publication types (PubMed's
``PublicationType``, Europe PMC's ``pubTypeList``), then its MeSH headings, then its title and
abstract (new records get their types months late), then the source itself (a registry entry, a web
page). The population comes from MeSH check tags (``Humans``, ``Animals``) first, then the text. The
scale and its sources are written down in ``phases/07_grading.md``. No I/O here: text in, Grade out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deepcritical.models import DESIGNS, Grade, GradeBasis, Population, StudyDesign

# OCEBM 2011 levels, from the one list of designs (``models.DESIGNS``).
OCEBM_LEVEL: dict[StudyDesign, int | None] = {name: design.level for name, design in DESIGNS.items()}
# A review that pooled only observational studies sits at the level of what it pooled (OCEBM 2011: "a
# systematic review is generally better than an individual study", within the level of its studies).
_OBSERVATIONAL_REVIEW_LEVEL = 3

# Which design wins when a record carries several types ("Meta-Analysis" and "Systematic Review").
# Preprint first: whatever its design, it has not been peer reviewed.
_PRECEDENCE: tuple[StudyDesign, ...] = (
    "preprint",
    "meta_analysis",
    "systematic_review",
    "randomized_controlled_trial",
    "clinical_trial",
    "cohort",
    "case_control",
    "cross_sectional",
    "observational",
    "case_report",
    "guideline",
    "narrative_review",
    "preclinical",
    "editorial_or_letter",
)
HUMAN_DESIGNS: frozenset[StudyDesign] = frozenset(name for name, design in DESIGNS.items() if design.in_humans)

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
    r"|rabbits|dogs|swine|sheep|cattle|primates|macaca.*|cricetinae|guinea pigs|models, animal)$"
)
_MESH_CELLS = re.compile(
    r"^(?:cells, cultured|cell line|cell line, .+|in vitro techniques|cell culture techniques|organoids"
    r"|(?:hela|hek293|hep g2|caco-2|pc12|jurkat|mcf-7|3t3|cos|cho|vero|hl-60|k562|thp-1|u937|a549|ht29|raw 264\.7)"
    r" cells)$"
)

# --- Text ---

_I = re.IGNORECASE
# Genetic epidemiology: observational, however "randomisation" and "meta-analysis" of GWAS read.
_MENDELIAN = re.compile(r"\bmendelian randomi[sz]ation\b", _I)
_META = re.compile(r"\bmeta-?analys[ie]s\b|\bmeta-?regression\b|\bpooled analysis\b", _I)
_META_METHOD = re.compile(
    r"\bsystematic review and meta-?analys[ie]s\b|\b(?:this|our|a) (?:\w+[- ]){0,3}meta-?analysis\b"
    r"|\bwe (?:performed|conducted|undertook|did|carried out) (?:a |an )?(?:\w+[- ]){0,3}meta-?analys[ie]s\b"
    r"|\bwere pooled\b|\bpooled (?:hazard|odds|risk|relative|estimate|effect|mean|analysis)",
    _I,
)
_SYSTEMATIC = re.compile(r"\bsystematic(?:ally)? review|\bcochrane review\b|\bumbrella review\b", _I)
_SYSTEMATIC_METHOD = re.compile(
    r"\bsystematic(?:ally)? (?:review|search|searched|literature search)"
    r"|\bwe searched (?:\w+ ){0,3}(?:pubmed|medline|embase|cochrane|web of science|scopus|databases)"
    r"|\b(?:pubmed|medline|embase)\b[^.]{0,80}\bwere searched\b|\bdata sources\s*:",
    _I,
)
_REVIEW_TITLE = re.compile(
    r"\b(?:a |an )?(?:narrative |literature |critical |brief |mini-?|comprehensive |scoping |state-of-the-art )?"
    r"review\b"
    r"|\boverview\b|\bstate of the art\b|\bcurrent (?:perspectives|concepts|evidence|understanding|status|trends)\b"
    r"|\brecent (?:advances|developments|progress)\b|\bfuture directions\b|\bnew insights\b|\bupdate on\b"
    r"|\ban update\b|\bchallenges and opportunities\b",
    _I,
)
_REVIEW_METHOD = re.compile(
    r"\b(?:this|the present|in this|our) (?:narrative |literature |brief |mini-?|critical )?review\b"
    r"|\bwe (?:review|summari[sz]e|discuss|highlight)\b|\b(?:is|are) (?:reviewed|summari[sz]ed|discussed)\b"
    r"|\bthis (?:article|paper|chapter) (?:reviews|summari[sz]es|discusses)\b|\bpurpose of review\b"
    r"|\bwe (?:provide|present|give) an? (?:\w+ ){0,2}(?:overview|update|summary)\b"
    r"|\bhere,? we (?:summari[sz]e|discuss|review|highlight|outline)\b",
    _I,
)
_RANDOMISED_TITLE = re.compile(r"\brandomi[sz]ed\b|\brandomly\b|\bplacebo-controlled\b|\bdouble-blind", _I)
_RANDOMISED_METHOD = re.compile(
    r"\b(?:were|was) (?:\w+ ){0,2}randomi[sz]ed\b|\brandomly (?:assigned|allocated)\b|\brandomi[sz]ed (?:1:1|2:1)\b"
    r"|\b(?:this|a|an|our|in a|the present) (?:\w+[-, ]+){0,5}randomi[sz]ed,? (?:\w+[-, ]+){0,4}(?:trial|study)\b"
    r"|\bplacebo-controlled\b",
    _I,
)
_PHASE = re.compile(r"\bphase[- ](IV|I{1,3}|[1-4])(?:[ab])?(?:\s*/\s*(IV|I{1,3}|[1-4])[ab]?)?\b", _I)
_TRIAL = re.compile(
    r"\bphase[- ](?:I{1,3}V?|IV|[1-4])[ab]?\b(?:\s*/\s*\w+)?(?: \w+){0,3} (?:trial|study)\b|\bopen-label\b"
    r"|\bsingle-arm\b|\bnon-?randomi[sz]ed\b(?: \w+){0,2} (?:trial|study)\b|\bpilot (?:\w+ )?trial\b"
    r"|\bclinical trial\b|\bdose-(?:escalation|finding)\b|\b(?:uncontrolled|controlled) trial\b",
    _I,
)
_CASE_CONTROL = re.compile(r"\bcase[- ]control\b|\bcase[- ]cohort\b", _I)
_COHORT = re.compile(
    r"\bcohort\b|\bprospective(?:ly)? (?:\w+ ){0,2}(?:study|followed|enrolled|recruited)\b"
    r"|\blongitudinal (?:\w+ ){0,2}study\b|\bfollowed (?:up )?for (?:a )?(?:median|mean|\d)",
    _I,
)
_CROSS_SECTIONAL = re.compile(r"\bcross-?sectional\b|\bprevalence (?:study|survey)\b|\bsurvey\b", _I)
_CASE_REPORT = re.compile(
    r"\bcase report\b|\bcase series\b|\bwe (?:report|describe|present) (?:a|an|the|two|three|four|five) "
    r"(?:\w+[- ]){0,4}(?:case|cases|patient|patients)\b|\ba \d{1,3}-year-old\b|\bin a case of\b",
    _I,
)
# A title that names one person: "... in a kidney transplant recipient."
_CASE_TITLE = re.compile(
    r"\bin an? (?:[\w'-]+ ){0,4}(?:patient|recipient|man|woman|boy|girl|child|infant|neonate|adolescent)\s*[.:]?\s*$",
    _I,
)
_OBSERVATIONAL = re.compile(
    r"\bobservational\b|\bretrospective(?:ly)?\b|\bregistry\b|\bpopulation-based\b|\bclaims data\b"
    r"|\belectronic (?:health|medical) records?\b|\bnested\b|\bdatabase study\b|\bpropensity\b",
    _I,
)
_GUIDELINE = re.compile(
    r"\bguidelines?\b|\bconsensus (?:statement|recommendations?|report|document)\b|\bposition (?:statement|paper)\b"
    r"|\bpractice recommendations\b",
    _I,
)
_EDITORIAL = re.compile(
    r"^(?:comment|letter|editorial|reply|response|in reply|correspondence|erratum|correction|retraction)\b"
    r"|\bcommentary\b|\beditorial\b|\bletter to the editor\b|\bauthors'? reply\b",
    _I,
)

ANIMAL_TEXT = re.compile(
    r"\b(?:mice|mouse|murine|rats?|rodents?|zebrafish|drosophila|c\. elegans|rabbits?|canine|porcine|swine|ovine"
    r"|monkeys?|macaques?|non-human primates?|hamsters?|guinea pigs?|animal models?|transgenic|knockout|knock-in"
    r"|wild-type littermates|xenografts?)\b",
    _I,
)
CELL_TEXT = re.compile(
    r"\bin vitro\b|\bcell lines?\b|\bcultured\b|\bcell cultures?\b|\bprimary (?:\w+ ){0,2}(?:cells|neurons|cultures)"
    r"|\bhek-?293|\bhela\b|\bsh-sy5y\b|\bhepg2\b|\borganoids?\b|\bcells were (?:treated|exposed|incubated|transfected)",
    _I,
)
HUMAN_TEXT = re.compile(
    r"\b(?:patients?|participants?|adults?|children|women|men|volunteers|subjects|individuals|people|persons"
    r"|infants|adolescents|veterans|residents|outpatients|inpatients|users|older adults|pregnan\w+|humans"
    r"|healthy controls|clinical (?:practice|trials?|studies|management))\b",
    _I,
)
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# Abstracts spell out a number that opens a sentence ("Eighty adults were randomised").
_WORD_VALUES = {
    **{word: n for n, word in enumerate(_UNITS, 1)},
    **{word: n for n, word in enumerate(_TEENS, 10)},
    **{word: 10 * n for n, word in enumerate(_TENS, 2)},
}
_BELOW_HUNDRED = rf"(?:{'|'.join(_TENS)})(?:-(?:{'|'.join(_UNITS)}))?|{'|'.join(_TEENS)}|{'|'.join(_UNITS)}"
_NUMBER_WORD = rf"(?:{'|'.join(_UNITS)}) hundred(?:(?: and)? (?:{_BELOW_HUNDRED}))?|{_BELOW_HUNDRED}"
_NUMBER = rf"(\d{{1,3}}(?:,\d{{3}})+|\d+|\b(?:{_NUMBER_WORD})\b)"
_PEOPLE = (
    r"(?:participants|patients|adults|subjects|people|individuals|women|men|children|volunteers|persons|veterans"
    r"|residents|users|infants|adolescents|cases|pregnancies|older adults|outpatients|inpatients)"
)
_N_EQUALS = re.compile(rf"\b[nN]\s*=\s*{_NUMBER}(?!\d|,\d)(?!\s*(?:per|in each|each|/))")
# "745 of a planned 1,000 patients": a target is not a count.
_N_PEOPLE = re.compile(rf"(?<![\d.,])(?<!planned )(?<!target of ){_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\b", _I)
_N_ENROLLED = re.compile(
    rf"(?<![\d.,]){_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\s+(?:[\w-]+\s+){{0,3}}?(?:were|was)\s+"
    r"(?:randomi[sz]ed|enrolled|included|recruited|assigned)"
    rf"|\bwe (?:randomi[sz]ed|enrolled|included|recruited) {_NUMBER}\s+(?:[\w-]+\s+){{0,3}}?{_PEOPLE}\b",
    _I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


@dataclass(frozen=True)
class _Found:
    design: StudyDesign
    basis: GradeBasis


def _normal(text: str) -> str:
    return " ".join(text.replace("-", " ").lower().split())


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


def phase_from_text(text: str) -> str | None:
    match = _PHASE.search(text)
    if match is None:
        return None
    numbers = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}
    first = numbers.get(match.group(1).lower(), match.group(1))
    if match.group(2):
        return f"{first}/{numbers.get(match.group(2).lower(), match.group(2))}"
    return first


def population_from_text(title: str, text: str) -> Population:
    """Who was studied, from the words used: a title that names animals or cells decides; else the kind of
    subject the abstract mentions more often (a mouse study's background may mention patients)."""
    if ANIMAL_TEXT.search(title):
        return "animals"
    if CELL_TEXT.search(title) and not HUMAN_TEXT.search(title):
        return "in_vitro"
    body = f"{title} {text}"
    animals, cells, humans = (len(pattern.findall(body)) for pattern in (ANIMAL_TEXT, CELL_TEXT, HUMAN_TEXT))
    if animals and animals >= humans:
        return "animals"
    if cells and cells >= humans:
        return "in_vitro"
    if humans:
        return "humans"
    return "unknown"


def design_from_text(title: str, text: str) -> StudyDesign | None:
    """The design a title and abstract state. The title is checked first (it names the design most
    reliably), then method statements in the abstract, so that a trial's background mentioning "previous
    meta-analyses" does not make it one."""
    for pattern, design in (
        (_MENDELIAN, "observational"),
        (_META, "meta_analysis"),
        (_SYSTEMATIC, "systematic_review"),
        (_CASE_REPORT, "case_report"),  # "A case report and review of the literature" reports a case
        (_CASE_TITLE, "case_report"),
        (_EDITORIAL, "editorial_or_letter"),
        (_GUIDELINE, "guideline"),
        (_REVIEW_TITLE, "narrative_review"),
        (_RANDOMISED_TITLE, "randomized_controlled_trial"),
        (_TRIAL, "clinical_trial"),
        (_CASE_CONTROL, "case_control"),
        (_CROSS_SECTIONAL, "cross_sectional"),
        (_COHORT, "cohort"),
        (_OBSERVATIONAL, "observational"),
    ):
        if pattern.search(title):
            return design  # type: ignore[return-value]
    for pattern, design in (
        (_MENDELIAN, "observational"),
        (_META_METHOD, "meta_analysis"),
        (_SYSTEMATIC_METHOD, "systematic_review"),
        (_RANDOMISED_METHOD, "randomized_controlled_trial"),
        (_TRIAL, "clinical_trial"),
        (_CASE_CONTROL, "case_control"),
        (_CROSS_SECTIONAL, "cross_sectional"),
        (_COHORT, "cohort"),
        (_CASE_REPORT, "case_report"),
        (_OBSERVATIONAL, "observational"),
        (_REVIEW_METHOD, "narrative_review"),
    ):
        if pattern.search(text):
            return design  # type: ignore[return-value]
    return None


def sample_size(text: str) -> int | None:
    """Participants, when the abstract states them: the number randomised or enrolled if given; else the
    largest "N participants/patients/adults…" or "n = N". Several "n = N" in one sentence are the arms of
    one study ("drug (n = 30) or placebo (n = 23)") and are added up."""

    def value(raw: str) -> int:
        if raw[0].isdigit():
            return int(raw.replace(",", ""))
        hundreds, _, rest = raw.lower().rpartition("hundred")
        below = sum(_WORD_VALUES[part] for part in rest.replace(" and ", " ").replace("-", " ").split())
        return 100 * _WORD_VALUES[hundreds.strip()] + below if hundreds else below

    def plausible(numbers: Iterable[int]) -> list[int]:
        # A bare four-digit year ("in 2019 patients were ...") is not a count.
        return [n for n in numbers if n > 0 and not (1900 <= n <= 2100)]

    enrolled = plausible(value(g) for m in _N_ENROLLED.finditer(text) for g in m.groups() if g)
    if enrolled:
        return max(enrolled)
    counts = plausible(value(m.group(1)) for m in _N_PEOPLE.finditer(text))
    for sentence in _SENTENCE.split(text):
        arms = plausible(value(m.group(1)) for m in _N_EQUALS.finditer(sentence))
        if arms:
            counts.append(sum(arms))
    return max(counts) if counts else None


_OBSERVATIONAL_POOL = re.compile(
    r"\b(?:cohort|observational|case-control|case control|cross-sectional)(?: and (?:[\w-]+ )?)?(?:studies|data)\b", _I
)
_TRIALS_POOLED = re.compile(
    r"\brandomi[sz]ed(?: controlled| clinical| placebo-controlled)? trials?\b"
    r"(?! (?:are|is|were|will be) (?:still )?(?:needed|required|warranted|lacking|scarce))",
    _I,
)


def _reviews_only_observational(text: str) -> bool:
    """A review that names observational studies as what it pooled and never randomised trials (a closing
    "randomised trials are needed" does not count as pooling them)."""
    return bool(_OBSERVATIONAL_POOL.search(text)) and not _TRIALS_POOLED.search(text)


def _level(design: StudyDesign, title: str, text: str) -> int | None:
    if design in ("meta_analysis", "systematic_review") and _reviews_only_observational(f"{title} {text}"):
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
    if population in ("animals", "in_vitro") and (
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
    return sample_size(text)


def grade_web(title: str, text: str) -> Grade:
    """A web page is a web page whatever study it reports: outside the scale, population from its text."""
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
