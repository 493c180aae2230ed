"""Stand-in for a SearXNG instance's JSON API (``GET /search?q=…&format=json``) over the demo corpus."""

from __future__ import annotations

from urllib.parse import urlparse

import httpx2

from deepcritical.demo.corpus import hits
from deepcritical.demo.records import SearxngRecord

PAGE_SIZE = 10  # results per page, roughly what a SearXNG instance returns


def result_item(record: SearxngRecord, score: float, position: int) -> dict[str, object]:
    """One entry of ``results`` as SearXNG serialises it (``parsed_url`` is a urlparse tuple, i.e. a list)."""
    item: dict[str, object] = {
        "url": record.url,
        "title": record.title,
        "content": record.content,
        "engine": record.engine,
        "engines": list(record.engines),
        "positions": [position] * len(record.engines),
        "score": round(score, 4),
        "category": record.category,
        "template": record.template,
        "publishedDate": record.published_date,
        "parsed_url": list(urlparse(record.url)),
        "thumbnail": None,
        "priority": "",
    }
    # Scholarly engines (paper.html results) report a DOI; general web engines do not.
    if record.doi and record.template == "paper.html":
        item["doi"] = record.doi
    return item


def search(request: httpx2.Request) -> httpx2.Response:
    params = request.url.params
    query = params.get("q", "").strip()
    if params.get("format", "html") != "json":
        # A real instance serves HTML here, or 403 when the format is not enabled; the stand-in speaks JSON only.
        return httpx2.Response(403, text="demo SearXNG stand-in: only format=json is served")
    if not query:
        return httpx2.Response(400, text="demo SearXNG stand-in: the q parameter is required")
    try:
        page = max(int(params.get("pageno", "1")), 1)
    except ValueError:
        page = 1
    found = [(hit.record, hit.score) for hit in hits("searxng", query) if isinstance(hit.record, SearxngRecord)]
    window = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    start = (page - 1) * PAGE_SIZE
    body = {
        "query": query,
        "number_of_results": len(found),
        "results": [result_item(record, score, start + i + 1) for i, (record, score) in enumerate(window)],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": [],
    }
    return httpx2.Response(200, json=body)


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The SearXNG stand-in's answer, or None for a path it does not serve."""
    # The instance may live under a path prefix (https://host/searxng/search).
    if request.method == "GET" and request.url.path.rstrip("/").endswith("/search"):
        return search(request)
    return None
