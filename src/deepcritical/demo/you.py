"""Stand-in for the You.com search API (``GET https://api.ydc-index.io/v1/search?query=…``) over the demo corpus."""

from __future__ import annotations

import uuid

import httpx2

from deepcritical.demo.corpus import search as corpus_search
from deepcritical.demo.records import YouRecord

DEFAULT_COUNT = 10
MAX_COUNT = 100
_UUID_NAMESPACE = uuid.UUID("8f6d2a4e-2b1c-4d3e-9f70-0d1e5c0a7b11")  # fixed, so answers are deterministic


def web_item(record: YouRecord) -> dict[str, object]:
    item: dict[str, object] = {
        "url": record.url,
        "title": record.title,
        "description": record.description,
        "snippets": list(record.snippets),
    }
    if record.page_age:
        item["page_age"] = record.page_age
    return item


def search(request: httpx2.Request) -> httpx2.Response:
    # Like the real service, no key means 401 before anything else is looked at; any non-blank key is accepted.
    if not request.headers.get("X-API-Key", "").strip():
        return httpx2.Response(
            401, json={"error": "Unauthorized", "message": "demo You.com stand-in: missing X-API-Key header"}
        )
    params = request.url.params
    query = params.get("query", "").strip()
    if not query:
        return httpx2.Response(
            422, json={"error": "Unprocessable Entity", "message": "demo You.com stand-in: query is required"}
        )
    try:
        count = min(max(int(params.get("count", DEFAULT_COUNT)), 1), MAX_COUNT)
        offset = max(int(params.get("offset", "0")), 0)
    except ValueError:
        message = "demo You.com stand-in: count and offset must be integers"
        return httpx2.Response(422, json={"error": "Unprocessable Entity", "message": message})
    records = [r for r in corpus_search("you", query, k=count * (offset + 1)) if isinstance(r, YouRecord)]
    body = {
        "results": {"web": [web_item(record) for record in records[offset * count :]], "news": []},
        "metadata": {
            "search_uuid": str(uuid.uuid5(_UUID_NAMESPACE, query)),
            "query": query,
            "latency": 0.0,
        },
    }
    return httpx2.Response(200, json=body)


def respond(request: httpx2.Request) -> httpx2.Response | None:
    """The You.com stand-in's answer, or None for a path it does not serve."""
    if request.method == "GET" and request.url.path.rstrip("/") == "/v1/search":
        return search(request)
    return None
