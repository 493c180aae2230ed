"""The de-duplication plan on hand-made vectors (no model, no store)."""

from __future__ import annotations

import numpy as np
import pytest

from deepcritical.evidence import dedup
from deepcritical.evidence.dedup import StoreMatch, plan
from deepcritical.models import merge_evidence
from helpers.stores import make_evidence


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_stored_items_are_kept_as_themselves_without_comparison() -> None:
    stored = [make_evidence("1", "finding one"), make_evidence("2", "finding two")]
    result = plan(stored, {"pmid:1", "pmid:2"}, np.zeros((0, 3), dtype=np.float32), {}, 0.9)
    assert [item.id for item in result.kept] == ["pmid:1", "pmid:2"]
    assert result.duplicates == {}
    assert result.stored_found_by == {}


def test_a_store_match_pointing_at_the_item_itself_is_ignored() -> None:
    item = make_evidence("1", "finding")
    result = plan([item], set(), np.stack([unit(1, 0)]), {"pmid:1": StoreMatch("pmid:1", 1.0)}, 0.9)
    assert result.kept == [item]
    assert result.duplicates == {}


def test_new_item_close_to_a_stored_one_is_dropped_and_credits_it() -> None:
    web_copy = make_evidence("copy", "same finding", source="web", pmid=False)
    result = plan([web_copy], set(), np.stack([unit(1, 0)]), {web_copy.id: StoreMatch("pmid:9", 0.95)}, 0.9)
    assert result.kept == []
    assert result.duplicates == {web_copy.id: "pmid:9"}
    assert result.stored_found_by == {"pmid:9": ("web",)}


def test_store_match_below_threshold_is_kept() -> None:
    item = make_evidence("1", "finding")
    result = plan([item], set(), np.stack([unit(1, 0)]), {item.id: StoreMatch("pmid:9", 0.89)}, 0.9)
    assert result.kept == [item]


def test_duplicate_of_a_re_found_item_credits_it_wherever_it_sits() -> None:
    copy = make_evidence("copy", "same finding", source="web", pmid=False)
    stored = make_evidence("9", "same finding")
    result = plan([copy, stored], {"pmid:9"}, np.stack([unit(1, 0)]), {copy.id: StoreMatch("pmid:9", 0.97)}, 0.9)
    assert [item.id for item in result.kept] == ["pmid:9"]
    assert result.kept[0].found_by == ("pubmed", "web")
    assert result.stored_found_by == {"pmid:9": ("web",)}


def test_later_new_duplicate_is_dropped_in_favour_of_the_earlier() -> None:
    first = make_evidence("1", "a", source="pubmed")
    second = make_evidence("2", "b", source="searxng", pmid=False)
    third = make_evidence("3", "c")
    vectors = np.stack([unit(1, 0, 0), unit(1, 0.1, 0), unit(0, 0, 1)])
    result = plan([first, second, third], set(), vectors, {}, 0.9)
    assert [item.id for item in result.kept] == ["pmid:1", "pmid:3"]
    assert result.duplicates == {second.id: "pmid:1"}
    assert result.kept[0].found_by == ("pubmed", "searxng")
    assert result.stored_found_by == {}


def test_new_items_are_compared_only_with_kept_items() -> None:
    # b is close to a (dropped); c is close to b but not to a, so c stays.
    a, b, c = (make_evidence(key, key) for key in "abc")
    vectors = np.stack([unit(1, 0), unit(0.8, 0.6), unit(0.28, 0.96)])
    assert float(vectors[1] @ vectors[2]) > 0.75
    result = plan([a, b, c], set(), vectors, {}, 0.75)
    assert [item.id for item in result.kept] == ["pmid:a", "pmid:c"]
    assert result.duplicates == {"pmid:b": "pmid:a"}


def test_the_stored_item_wins_a_tie_with_a_new_one() -> None:
    first, second = make_evidence("1", "a"), make_evidence("2", "b")
    vectors = np.stack([unit(1, 0), unit(1, 0)])
    result = plan([first, second], set(), vectors, {second.id: StoreMatch("pmid:9", 1.0)}, 0.9)
    assert result.duplicates == {"pmid:2": "pmid:9"}


def test_repeats_of_an_id_merge_into_one_item() -> None:
    pubmed = make_evidence("1", "short")
    web = pubmed.model_copy(update={"found_by": ("web",)})
    merged = merge_evidence([pubmed, make_evidence("2", "x"), web])
    assert [item.id for item in merged] == ["pmid:1", "pmid:2"]
    assert set(merged[0].found_by) == {"pubmed", "web"}


def test_opposite_findings_are_never_merged_however_close_their_vectors() -> None:
    reduces = make_evidence("1", "Metformin reduces the risk of Alzheimer's disease.")
    increases = make_evidence("2", "Metformin increases the risk of Alzheimer's disease.")
    no_effect = make_evidence("3", "Metformin does not reduce the risk of Alzheimer's disease.")
    vectors = np.stack([unit(1, 0), unit(1, 0), unit(1, 0)])
    result = plan([reduces, increases, no_effect], set(), vectors, {}, 0.9)
    assert [item.id for item in result.kept] == ["pmid:1", "pmid:2", "pmid:3"]
    assert result.duplicates == {}


def test_a_stored_opposite_finding_does_not_swallow_a_new_one() -> None:
    new = make_evidence("new", "Long-term use was associated with a higher risk of dementia.", pmid=False)
    stored = StoreMatch("pmid:9", 0.99, "Long-term use was associated with a lower risk of dementia.")
    result = plan([new], set(), np.stack([unit(1, 0)]), {new.id: stored}, 0.9)
    assert result.kept == [new]


def test_paraphrases_with_the_same_direction_still_merge() -> None:
    new = make_evidence("new", "Use of metformin was linked to a lower dementia risk.", source="web", pmid=False)
    stored = StoreMatch("pmid:9", 0.95, "Metformin use was associated with reduced risk of dementia.")
    result = plan([new], set(), np.stack([unit(1, 0)]), {new.id: stored}, 0.9)
    assert result.duplicates == {new.id: "pmid:9"}


def test_direction_words_are_read_only_for_pairs_above_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """The threshold is the cheap test and rejects most pairs: the direction words (three regular
    expressions per text) are read only for a pair that passed it."""
    compared: list[tuple[str, str]] = []
    real = dedup.may_disagree

    def spy(first: str, second: str) -> bool:
        compared.append((first, second))
        return real(first, second)

    monkeypatch.setattr(dedup, "may_disagree", spy)
    items = [make_evidence(str(n), f"finding {n} increases survival") for n in range(1, 6)]
    vectors = np.eye(5, dtype=np.float32)
    vectors[4] = unit(1, 0, 0, 0, 0.1)  # the last is close to the first, and only that pair is read
    result = plan(items, set(), vectors, {}, 0.9)
    assert compared == [("finding 5 increases survival", "finding 1 increases survival")]
    assert result.duplicates == {"pmid:5": "pmid:1"}
