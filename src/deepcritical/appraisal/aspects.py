"""What an item of evidence speaks to: a biological mechanism, clinical evidence in humans, or safety. The
code-built assessment scores how well the evidence covers each, and the searches ask for what is missing."""

from __future__ import annotations

import re

from deepcritical.appraisal.passages import CONTRARY

ASPECTS = ("mechanism", "clinical", "safety")
ASPECT_LABELS = {
    "mechanism": "a biological mechanism",
    "clinical": "clinical evidence in humans",
    "safety": "safety or contrary evidence",
}
ASPECT_QUERY_WORDS = {
    "mechanism": "mechanism pathway",
    "clinical": "clinical trial cohort patients",
    "safety": "safety adverse effects risk",
}
SUFFICIENT_SCORE = 7

# Generic study-type and study-subject words only: nothing here may name one question's drugs, diseases
# or pathways, or the code-built assessment would score questions by how much they resemble one corpus.
_FAMILIES = {
    "mechanism": r"mechanis\w*|pathways?|signal+ing|in vitro|in vivo|mice|mouse|rats?\b|animal models?|transgenic"
    r"|cell lines?|cultured|preclinical|molecular|receptors?\b|gene expression|biomarkers?|inflammat\w*",
    "clinical": r"randomi[sz]ed|trials?\b|placebo|cohorts?\b|case-control|meta-analys[ie]s|systematic review"
    r"|participants|patients|observational|prospective|retrospective|hazard ratio|odds ratio|relative risk"
    r"|population-based|clinical",
    "safety": r"adverse|safety|side effects?|toxicit\w*|tolerab\w*|harm\w*|contraindicat\w*|increased risk"
    r"|higher risk|discontinu\w*|deficienc\w*",
}
_ASPECT_PATTERNS = {name: re.compile(rf"\b(?:{pattern})", re.IGNORECASE) for name, pattern in _FAMILIES.items()}


def aspects_of(text: str) -> set[str]:
    found = {name for name, pattern in _ASPECT_PATTERNS.items() if pattern.search(text)}
    if CONTRARY.search(text):
        found.add("safety")
    return found
