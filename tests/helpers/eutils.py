"""A local stand-in for NCBI's E-utilities (no network): esearch and efetch answered from the request alone."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2


def eutils_handler(stamps: list[float], clock: Callable[[], float]) -> Callable[[httpx2.Request], httpx2.Response]:
    """Answers esearch with two PMIDs derived from the term, and efetch with an article per PMID."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        stamps.append(clock())
        if request.url.path.endswith("esearch.fcgi"):
            seed = int(request.url.params["term"].split()[-1])
            ids = [str(1000 + 2 * seed), str(1001 + 2 * seed)]
            return httpx2.Response(200, text=json.dumps({"esearchresult": {"count": "2", "idlist": ids}}))
        articles = "".join(
            f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>Title {pmid}</ArticleTitle>"
            f"<Abstract><AbstractText>Abstract {pmid}.</AbstractText></Abstract></Article></MedlineCitation>"
            "</PubmedArticle>"
            for pmid in request.url.params["id"].split(",")
        )
        return httpx2.Response(200, text=f"<PubmedArticleSet>{articles}</PubmedArticleSet>")

    return handle
