"""How the LLM request budget is split between the research loop and the report."""

from __future__ import annotations

import pytest

from deepcritical.agents.deps import Budget
from helpers.research_fakes import FakeClock, demo_settings


@pytest.mark.parametrize(
    ("total", "loop"),
    [(1, 1), (2, 1), (3, 2), (4, 2), (5, 2), (6, 3), (60, 57)],
)
def test_the_loop_keeps_two_requests_and_the_report_one_when_the_budget_allows(total: int, loop: int) -> None:
    budget = Budget.from_settings(demo_settings(DEEPCRITICAL_MAX_LLM_REQUESTS=total), FakeClock())
    assert budget.usage_limits().request_limit == loop
    assert budget.usage_limits(report=True).request_limit == total
