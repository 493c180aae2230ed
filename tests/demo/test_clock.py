"""The demo clock hides every record dated after its today, whatever dates it: the corpus's own mark
(``entered``) or the record's date (a publication, a preprint, a registration, a web page's)."""

from __future__ import annotations

from datetime import date

import pytest

from deepcritical.demo import clock
from deepcritical.demo.corpus import hits
from deepcritical.demo.records import as_of, entry_date, load_corpus

KINDS = ("pubmed", "europepmc", "clinicaltrials", "searxng", "you")
QUERIES = ("metformin alzheimer", "statins dementia", "sglt2 heart failure", "aspirin stroke", "vitamin d fractures")


@pytest.mark.parametrize("today", [date(2015, 1, 1), date(2021, 1, 1), date(2023, 6, 1)])
def test_no_record_dated_after_the_demo_today_is_found(today: date) -> None:
    with clock.set_to(today):
        found = [hit.record for kind in KINDS for query in QUERIES for hit in hits(kind, query)]
    assert found  # the check below is not vacuous
    assert [record.id for record in found if entry_date(record) > today] == []


def test_records_dated_later_by_their_own_date_only_are_hidden_too() -> None:
    dated_by_themselves = [record for record in load_corpus().records if record.entered is None]
    latest = max(dated_by_themselves, key=entry_date)
    day = entry_date(latest)
    assert as_of(latest, day) is not None
    assert as_of(latest, date.fromordinal(day.toordinal() - 1)) is None
