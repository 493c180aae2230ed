"""Full text for a run's key studies: after the research loop, the open-access full text of the best items
with a PMCID is read (from the library, else fetched from PubMed Central and kept there), and the
passages that bear on the question join the run's evidence, each citing its article's section.

Which passages: those of the article's body (not its title, abstract or back matter) that share the most
terms with the question by BM25 (the keyword half of the run's hybrid retrieval), weighed by section
(Results and Methods first), at most ``PASSAGES_PER_ARTICLE`` of each article; with the rest of the
evidence they are then ranked by the store's hybrid retrieval when the Report's items are chosen. A
passage has its article's grade and relevance.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from deepcritical.evidence.retrieval import BM25Index
from deepcritical.models import Evidence
from deepcritical.sources.fulltext import FullTextCache, FullTextFetcher, FullTextReport, fetch_full_texts
from deepcritical.stages.collection import RunEvidence

PASSAGES_PER_ARTICLE = 2
NOT_BODY = frozenset({"Title", "Abstract", "Back matter", "References", "Figures and tables"})
# What a clinician reads a full text for (effect sizes, follow-up, harms, who was excluded) is in the Methods
# and Results; an introduction restates background. A BM25 score is weighed by the section it falls in.
SECTION_WEIGHTS = {"results": 1.5, "methods": 1.3, "discussion": 1.0, "introduction": 0.6, "background": 0.6}


def section_weight(section: str | None) -> float:
    """The weight of a section by the usual name its title contains ('Materials and Methods' is Methods)."""
    title = (section or "").lower()
    return next((weight for name, weight in SECTION_WEIGHTS.items() if name in title), 1.0)


def _article(item: Evidence) -> str:
    return item.citation.pmcid or (item.passage.document_id if item.passage else item.id)


def bearing_passages(question: str, passages: Sequence[Evidence], per_article: int) -> list[Evidence]:
    """Each article's body passages that share most with ``question``, best first, ``per_article`` each."""
    body = [item for item in passages if item.passage is None or item.passage.section not in NOT_BODY]
    if not body:
        return []
    scores = BM25Index([item.content for item in body]).scores(question)
    by_article: dict[str, list[tuple[float, Evidence]]] = defaultdict(list)
    for score, item in zip(scores, body, strict=True):
        if score > 0:
            weight = section_weight(item.passage.section if item.passage else None)
            by_article[_article(item)].append((float(score) * weight, item))
    chosen = [pair for ranked in by_article.values() for pair in sorted(ranked, key=lambda p: -p[0])[:per_article]]
    return [item for _, item in sorted(chosen, key=lambda p: -p[0])]


async def read_full_texts(
    evidence: RunEvidence,
    question: str,
    fetcher: FullTextFetcher,
    *,
    max_articles: int,
    cache: FullTextCache | None = None,
) -> tuple[FullTextReport, list[Evidence]]:
    """Fetch (or recall) the key studies' full texts and add their passages bearing on ``question`` to the
    run's evidence; returns what was read and the passages added."""
    collected = list(evidence)
    report = await fetch_full_texts(fetcher, collected, max_articles, cache)
    relevance = {item.citation.pmcid: item.relevance for item in collected if item.citation.pmcid}
    chosen = [
        item.model_copy(update={"relevance": relevance.get(item.citation.pmcid or "", item.relevance)})
        for item in bearing_passages(question, report.passages, PASSAGES_PER_ARTICLE)
    ]
    # A passage of a study recalled from an earlier run is recalled too: it never makes this run succeed.
    recalled = {item.citation.pmcid for item in collected if item.id in evidence.recalled_ids and item.citation.pmcid}
    found = [item for item in chosen if item.citation.pmcid not in recalled]
    again = [item for item in chosen if item.citation.pmcid in recalled]
    return report, [*await evidence.add(found), *await evidence.add(again, recalled=True)]
