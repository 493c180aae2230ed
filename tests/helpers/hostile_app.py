"""The real web app in demo mode, except that hostile text comes back from the stand-ins: every PubMed title
starts with (escaped) markup, and SearXNG also returns one hostile result with markup, an ``onerror``
attribute, a ``javascript:`` link and script tags in its title and snippet. Tests serve it
with ``uvicorn --factory helpers.hostile_app:create`` (settings from the environment, as ``serve`` reads them)."""

from __future__ import annotations

import json

import httpx2
from fastapi import FastAPI

from deepcritical.config import Settings, load_settings
from deepcritical.demo.transport import route
from deepcritical.sources.factory import make_http_client
from deepcritical.web.app import create_app

PWNED = "window.__pwned"
HOSTILE_TITLE = (
    f"[DEMO] Metformin and Alzheimer's disease <script>{PWNED}='title'</script><img src=x onerror=\"{PWNED}='img'\">"
)
HOSTILE_CONTENT = (
    "Metformin use was associated with a lower risk of Alzheimer's disease in older adults with diabetes. "
    f"<script>{PWNED}='snippet'</script> <a href=\"javascript:{PWNED}='link'\">javascript:{PWNED}='bare'</a> "
    f"<img src=x onerror=\"{PWNED}='snippet-img'\">"
)
HOSTILE_RESULT = {
    "url": "https://demo.deepcritical.invalid/hostile/metformin-alzheimers?<script>",
    "title": HOSTILE_TITLE,
    "content": HOSTILE_CONTENT,
    "engine": "google",
    "engines": ["google"],
    "positions": [1],
    "score": 9.0,
    "category": "general",
    "template": "default.html",
    "publishedDate": "2022-05-01T00:00:00",
}


# A paper's title is text from outside too: written escaped in PubMed's XML, it reaches the evidence as
# literal markup. Every PubMed title carries it, so whichever records the report cites show it.
ESCAPED_TITLE_MARKUP = f"&lt;script&gt;{PWNED}='title'&lt;/script&gt;&lt;img src=x onerror=\"{PWNED}='img'\"&gt; "


def hostile_route(request: httpx2.Request) -> httpx2.Response:
    response = route(request)
    if response.status_code == 200 and request.url.path.endswith("/efetch.fcgi"):
        xml = response.text.replace("<ArticleTitle>", f"<ArticleTitle>{ESCAPED_TITLE_MARKUP}")
        return httpx2.Response(200, text=xml, headers={"Content-Type": response.headers["Content-Type"]})
    if "searxng" not in request.url.host or response.status_code != 200:
        return response
    body = json.loads(response.content)
    body["results"].insert(0, HOSTILE_RESULT)
    return httpx2.Response(200, json=body)


def hostile_client(settings: Settings) -> httpx2.AsyncClient:
    return make_http_client(httpx2.MockTransport(hostile_route))


def create() -> FastAPI:
    return create_app(load_settings(demo_mode=True), client_factory=hostile_client)
