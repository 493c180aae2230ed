"""What a title and an abstract say in words: the design, the phase, who was studied, and whether a review
pooled only observational studies."""

from __future__ import annotations

import re

from deepcritical.models import Population, StudyDesign

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

# Fish, amphibians, birds, farm and companion animals and invertebrates too (a fathead-minnow toxicity study
# names "patients" only in its background); "fish oil" and a diet's "fish intake" are what people take.
ANIMAL_TEXT = re.compile(
    r"\b(?:mice|mouse|murine|rats?|rodents?|zebrafish|drosophila|c\. elegans|rabbits?|canine|porcine|swine|ovine"
    r"|monkeys?|macaques?|non-human primates?|hamsters?|guinea pigs?|animal models?|transgenic|knockout|knock-in"
    r"|wild-type littermates|xenografts?"
    r"|fish(?:es)?(?! oil| intake| consumption| diet)|minnows?|medaka|trout|salmon|carp|daphnia|xenopus|tadpoles?"
    r"|frogs?|chickens?|chick embryos?|broilers|piglets?|pigs|sows|cattle|cows|calves|heifers|sheep|ewes|lambs"
    r"|goats|horses|dogs|beagles|cats|nematodes|invertebrates|(?:fathead|pimephales) \w+)\b",
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


_OBSERVATIONAL_POOL = re.compile(
    r"\b(?:cohort|observational|case-control|case control|cross-sectional)(?: and (?:[\w-]+ )?)?(?:studies|data)\b", _I
)
_TRIALS_POOLED = re.compile(
    r"\brandomi[sz]ed(?: controlled| clinical| placebo-controlled)? trials?\b"
    r"(?! (?:are|is|were|will be) (?:still )?(?:needed|required|warranted|lacking|scarce))",
    _I,
)


def reviews_only_observational(text: str) -> bool:
    """A review that names observational studies as what it pooled and never randomised trials (a closing
    "randomised trials are needed" does not count as pooling them)."""
    return bool(_OBSERVATIONAL_POOL.search(text)) and not _TRIALS_POOLED.search(text)
