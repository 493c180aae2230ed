"""PubMed esearch responses to PMIDs. No requests here: text in, results out."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepcritical.sources.ncbi_body import (
    as_list,
    decode_body,
    fail,
    flatten_text,
    get,
    raise_error_text,
    raise_for_unexpected_root,
)

_PMID = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class EsearchResult:
    """PMIDs in PubMed's relevance order, the total count, and any notes PubMed attached."""

    ids: list[str]
    count: int
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def _messages(groups: object) -> tuple[str, ...]:
    """'PhraseNotFound: abcXYZ' lines from an ErrorList / errorlist / WarningList group."""
    if not isinstance(groups, dict):
        return (flatten_text(groups),) if flatten_text(groups) else ()
    return tuple(
        f"{key}: {text}" for key, values in groups.items() for value in as_list(values) if (text := flatten_text(value))
    )


def _count(value: object, fallback: int) -> int:
    text = flatten_text(value)
    return int(text) if re.fullmatch(r"[0-9]{1,12}", text) else fallback


def _esearch_result(ids_node: object, count: object, errors: object, warnings: object) -> EsearchResult:
    ids = [flatten_text(item) for item in as_list(ids_node)]
    if bad := [pmid for pmid in ids if not _PMID.fullmatch(pmid)]:
        fail("esearch", f"returned ids that are not PMIDs: {bad[:3]!r}")
    result = EsearchResult(ids, _count(count, len(ids)), _messages(errors), _messages(warnings))
    if result.errors and not result.ids:
        # PubMed says why nothing matched (e.g. PhraseNotFound for every term): the query was
        # unusable, and the caller should hear that rather than see a silent empty list.
        fail("esearch", f"found nothing and reported errors: {'; '.join(result.errors)[:300]}")
    return result


def parse_esearch_data(kind: str, data: object) -> EsearchResult:
    """PMIDs, in relevance order, from a decoded esearch body (JSON as requested, or XML)."""
    if kind == "json":
        if not isinstance(data, dict):
            fail("esearch", "returned JSON that is not an object")
        raise_error_text("esearch", data.get("error"))
        result = data.get("esearchresult")
        if not isinstance(result, dict):
            fail("esearch", f"returned JSON without an esearchresult: {str(data)[:120]!r}")
        raise_error_text("esearch", result.get("ERROR"))
        return _esearch_result(
            result.get("idlist"), result.get("count"), result.get("errorlist"), result.get("warninglist")
        )
    raise_for_unexpected_root("esearch", data, "eSearchResult")
    root = get(data, "eSearchResult")
    raise_error_text("esearch", get(root, "ERROR"))
    return _esearch_result(
        get(root, "IdList", "Id"), get(root, "Count"), get(root, "ErrorList"), get(root, "WarningList")
    )


def parse_esearch(text: str) -> EsearchResult:
    """Parse an esearch body; errors, HTML and malformed bodies raise SearchError."""
    kind, data = decode_body(text, "esearch")
    return parse_esearch_data(kind, data)
