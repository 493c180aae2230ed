"""DemoDDGS stands in for ddgs.DDGS: same call signature, same result keys, same no-results behaviour."""

from __future__ import annotations

import inspect

import pytest
from ddgs.ddgs import DDGS  # the class itself: ddgs.DDGS is a lazy-loading proxy
from ddgs.exceptions import DDGSException

from deepcritical.demo.ddgs import DemoDDGS
from deepcritical.demo.records import DEMO_HOST


def _parameters(function: object, drop: tuple[str, ...]) -> list[tuple[str, object, object]]:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values() if p.name not in drop]


def test_text_accepts_what_ddgs_text_accepts() -> None:
    # DDGS.text(query, **kwargs) forwards to _search_sync(category, query, ...); the stand-in takes the same.
    assert _parameters(DemoDDGS.text, ("self",)) == _parameters(DDGS._search_sync, ("self", "category"))


def test_constructor_matches_ddgs() -> None:
    assert _parameters(DemoDDGS.__init__, ("self",)) == _parameters(DDGS.__init__, ("self",))


def test_results_have_ddgs_keys_and_demo_urls() -> None:
    results = DemoDDGS().text("statins sepsis", max_results=5, safesearch="moderate")
    assert results
    for item in results:
        assert set(item) == {"title", "href", "body"}
        assert item["title"].startswith("[DEMO] ")
        assert item["href"].startswith(f"https://{DEMO_HOST}/")
        assert item["body"]
    assert "statin" in (results[0]["title"] + results[0]["body"]).lower()


def test_different_queries_give_different_results() -> None:
    sglt2 = {item["href"] for item in DemoDDGS().text("SGLT2 heart failure", max_results=3)}
    covid = {item["href"] for item in DemoDDGS().text("long COVID fatigue", max_results=3)}
    assert sglt2
    assert covid
    assert not sglt2 & covid


def test_max_results_and_pages() -> None:
    ddgs = DemoDDGS()
    everything = ddgs.text("metformin", max_results=None)
    assert len(everything) > 2
    first = ddgs.text("metformin", max_results=2)
    second = ddgs.text("metformin", max_results=2, page=2)
    assert first + second == everything[:4]


def test_no_match_raises_like_ddgs() -> None:
    with pytest.raises(DDGSException, match=r"^No results found\.$"):
        DemoDDGS().text("zzqxv blorft")
    with pytest.raises(DDGSException, match="query is mandatory"):
        DemoDDGS().text("")


def test_keywords_alias_and_context_manager() -> None:
    with DemoDDGS(timeout=3) as ddgs:
        assert ddgs.text("", keywords="vitamin D depression", region="uk-en", timelimit="y") == ddgs.text(
            "vitamin D depression"
        )
