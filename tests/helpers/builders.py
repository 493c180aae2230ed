"""The model objects tests build by hand, each from one builder with sane defaults: a test names only what it
is about (the text, the PMID, the grade) and the rest is a valid, unremarkable value."""

from __future__ import annotations

from typing import Any

import numpy as np

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.stance import FEATURE_NAMES, STANCES, StanceModel
from deepcritical.models import Citation, Evidence, SourceName

CITATION_FIELDS = frozenset(Citation.model_fields)


def evidence(
    content: str,
    *,
    pmid: str | None = None,
    source: SourceName = "pubmed",
    title: str | None = None,
    url: str | None = None,
    **fields: Any,
) -> Evidence:
    """An item with ``content``; ``fields`` go to its citation (``date``, ``authors``, ``doi``...) or to the item
    (``grade``, ``relevance``, ``found_by``, ``passage``...) by name. Defaults: the title "Study <pmid>" (or "A
    study"), the URL PubMed's page of ``pmid`` (or an example.org page of the title), so the id is ``pmid:<pmid>``
    when there is a PMID."""
    cited = {name: value for name, value in fields.items() if name in CITATION_FIELDS}
    own = {name: value for name, value in fields.items() if name not in CITATION_FIELDS}
    title = title or (f"Study {pmid}" if pmid else "A study")
    if url is None:
        url = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/" if pmid else f"https://example.org/{'-'.join(title.split())}"
    citation = Citation(source=source, title=title, url=url, pmid=pmid, **cited)
    return Evidence(content=content, citation=citation, **own)


def evidence_view(pmid: str, title: str, text: str, design: str, level: int, n: int | None) -> EvidenceView:
    """What the appraisal reads of a PubMed record of a study in humans, published in 2020."""
    return EvidenceView(
        id=f"pmid:{pmid}",
        title=title,
        source="pubmed",
        date="2020",
        text=text,
        design=design,
        level=level,
        population="humans",
        n=n,
        document=f"pmid:{pmid}",
    )


def fixed_stance(yes: float, no: float, maybe: float) -> StanceModel:
    """A stance model that gives every item the same probabilities (no feature weighs anything)."""
    width = len(FEATURE_NAMES)
    return StanceModel(np.zeros(width), np.ones(width), np.zeros((len(STANCES), width)), np.log([yes, no, maybe]))


# A clinician's own trials in the library (phases/22_library_trials.md): each item is a passage of a full text, and
# the question is often written as the trial's methods write the intervention.
THALIDOMIDE = "Does 100 mg thalidomide daily change progression-free survival compared with placebo?"
THALIDOMIDE_RESULTS = EvidenceView(
    id="file:mpt#12",
    title="Thalidomide with melphalan and prednisone in elderly myeloma: a randomised trial",
    source="library",
    date="2008",
    text="Progression-free survival was longer with thalidomide than with placebo (HR 0.62, 95% CI 0.47 to 0.82).",
    design="randomized_controlled_trial",
    level=2,
    population="humans",
    section="Results",
    document="file:mpt",
)
