"""Decoding NCBI E-utilities bodies and walking the trees xmltodict makes of them.

Everything here is defensive by design: the parsers must turn any body, and any tree, into either
a result or a ``SearchError`` that says what came back; no other exception may escape.
"""

from __future__ import annotations

import json
import re
from typing import Literal, NoReturn
from xml.parsers.expat import ExpatError

import xmltodict

from deepcritical.errors import RateLimitError, SearchError, UnusableResponseError
from deepcritical.text import collapse_whitespace, shorten

# Inline markup inside titles and abstracts (<i>, <sup>, MathML). xmltodict would move the marked-up
# words out of the sentence into child keys, losing their place, so the tags go first and their text
# stays where it was. Inside a formula the whitespace between elements is layout, not text.
_INLINE_TAG = re.compile(r"</?(?:b|i|u|sup|sub)(?:\s[^<>]*)?/?>")
_MATHML_INNER_TAG = re.compile(r"\s*</?mml:(?!math\b)[\w.\-]+(?:\s[^<>]*)?/?>\s*")
_MATHML_BOUNDARY = re.compile(r"</?mml:math\b[^<>]*>")
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)

Kind = Literal["json", "xml"]


def snippet(text: str, limit: int = 160) -> str:
    """The first ``limit`` characters of ``text`` on one line, for error messages."""
    return shorten(text, limit)


def fail(what: str, problem: str) -> NoReturn:
    raise SearchError(f"{what} {problem}", source="pubmed")


def fail_for_now(what: str, problem: str) -> NoReturn:
    """A body that usually comes right when asked again: NCBI's maintenance page, an empty or cut-off body."""
    raise UnusableResponseError(f"{what} {problem}", source="pubmed")


def raise_error_text(what: str, message: object) -> None:
    """Raise for an NCBI ``error`` / ``ERROR`` value, if there is one."""
    text = flatten_text(message)
    if not text:
        return
    if "rate limit" in text.lower():
        raise RateLimitError(f"{what} refused: {snippet(text)}", source="pubmed")
    fail(what, f"returned an error: {snippet(text, 300)}")


def _html_problem(text: str) -> str:
    match = _HTML_TITLE.search(text)
    title = f" titled {snippet(match.group(1), 100)!r}" if match and match.group(1).strip() else ""
    return f"returned an HTML page{title} instead of data"


def strip_inline_markup(xml: str) -> str:
    """The XML with inline formatting and MathML tags removed and their text kept in place."""
    return _MATHML_BOUNDARY.sub(" ", _MATHML_INNER_TAG.sub("", _INLINE_TAG.sub("", xml)))


def decode_body(text: str, what: str) -> tuple[Kind, object]:
    """Decode a body as JSON or XML according to what it is, not what was asked for. A body that is not
    data at all (empty, HTML, cut off) raises UnusableResponseError, which the request retries."""
    head = text.lstrip()
    if not head:
        fail_for_now(what, "returned an empty body")
    lowered = head[:100].lower()
    if lowered.startswith(("<!doctype html", "<html")):
        fail_for_now(what, _html_problem(head))
    if head.startswith(("{", "[")):
        try:
            return "json", json.loads(head)
        except (ValueError, RecursionError) as error:
            fail_for_now(what, f"returned malformed JSON ({error}); it began: {snippet(head, 80)!r}")
    if not head.startswith("<"):
        fail_for_now(what, f"returned neither XML nor JSON; it began: {snippet(head, 80)!r}")
    try:
        return "xml", xmltodict.parse(strip_inline_markup(head))
    except (ExpatError, ValueError) as error:  # ValueError: entity declarations refused, bad encoding
        fail_for_now(what, f"returned malformed or truncated XML ({error}); it began: {snippet(head, 80)!r}")
    except RecursionError as error:
        fail(what, f"returned XML nested too deeply to read ({type(error).__name__})")


def raise_for_unexpected_root(what: str, data: object, expected: str) -> None:
    """Explain an XML document whose root is not ``expected``: an NCBI error, HTML, or something else."""
    if not isinstance(data, dict) or not data:
        fail(what, "returned an XML document with no root element")
    name, root = next(iter(data.items()))
    if name == expected:
        return
    if name == "ERROR":
        raise_error_text(what, root)
    raise_error_text(what, get(root, "ERROR"))
    if str(name).lower() == "html":
        fail_for_now(what, "returned an HTML page instead of data")
    fail(what, f"returned <{name}> instead of <{expected}>")


def get(node: object, *path: str) -> object:
    """Follow ``path`` through nested dicts; a list on the way means the first item; a miss means None."""
    for key in path:
        if isinstance(node, list):
            node = node[0] if node else None
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def as_list(node: object) -> list[object]:
    """xmltodict gives one child as a value and several as a list; this always gives a list."""
    if node is None:
        return []
    if isinstance(node, list):
        return node
    return [node]


def attr(node: object, name: str) -> str | None:
    value = node.get(f"@{name}") if isinstance(node, dict) else None
    return value.strip() if isinstance(value, str) else None


def flatten_text(node: object) -> str:
    """All the text in a subtree, in document order, whitespace collapsed; attributes left out.

    Iterative on purpose: a hostile body can nest deeper than Python's recursion limit.
    """
    parts: list[str] = []
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, dict):
            children = [value for key, value in item.items() if not (isinstance(key, str) and key.startswith("@"))]
            stack.extend(reversed(children))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            parts.append(str(item))
    return collapse_whitespace(" ".join(parts))
