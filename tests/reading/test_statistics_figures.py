"""The statistics reader's figures on its hand-labelled sets (bench/stats_bench.py; phases/23_readers.md), pinned
at the figures reported less 0.02: a change to the rules that loses more on any set fails here, and in CI, which
requires ../shared/data (the labels hold only pointers into it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "stats_bench.py"
# (set, part) -> the reported F1 of p-values, estimates and group values, and the share of significance read right
# (round 3 of issue 39, phases/23_readers.md section 7; no figure lowered: significance rose on every set, estimates
# and group values on round 2's set, the rest held; round 3's set added, its held-out half as read once at the end).
REPORTED = {
    ("stats_labels", "all"): {"p": 0.9869, "estimate": 0.9524, "groups": 0.7415, "significance": 0.9871},
    ("stats_labels", "held_out"): {"p": 0.9665, "estimate": 0.8475, "groups": 0.7000, "significance": 0.9915},
    ("stats_labels_second", "all"): {"p": 0.9959, "estimate": 0.9870, "groups": 0.8054, "significance": 0.9745},
    ("stats_labels_third", "development"): {"p": 1.0, "estimate": 1.0, "groups": 0.8395, "significance": 1.0},
    ("stats_labels_third", "held_out"): {"p": 0.8926, "estimate": 0.8333, "groups": 0.5641, "significance": 0.9394},
    # Round 4 (phases/23_readers.md section 8): the development half is the number tagger's training data (a fitted
    # figure); the held-out half as read once at the end, with the tagger shipped.
    ("stats_labels_fourth", "development"): {"p": 0.9939, "estimate": 0.8400, "groups": 0.6667, "significance": 0.9495},
    ("stats_labels_fourth", "held_out"): {"p": 1.0, "estimate": 1.0, "groups": 0.6579, "significance": 0.9737},
    ("effects_labels", None): {"p": 0.9966, "estimate": 0.9760, "groups": 0.8148, "significance": 1.0},
    ("effects_labels_validation", None): {"p": 1.0, "estimate": 1.0, "groups": 0.9524, "significance": 0.9815},
}


def test_the_statistics_reader_keeps_its_reported_figures(shared_data: Callable[[str], Path]) -> None:
    for folder in ("evidence-inference", "pubmedqa", "medevidence-dev"):
        shared_data(folder)  # skipped without them in a user's clone, failed in CI
    result = subprocess.run(
        [sys.executable, str(BENCH), "--json"], capture_output=True, text=True, check=False, env=dict(os.environ)
    )
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    for (labels, part), reported in REPORTED.items():
        figures = measured[labels][part] if part else measured[labels]
        for kind, figure in reported.items():
            value = figures[kind] if kind == "significance" else figures[kind]["f1"]
            assert value >= figure - 0.02, (labels, part, kind, value, figure)
