"""A forest plot as SVG: each study's estimate and interval, its design and n, on a log axis for ratios
and a linear one for differences, with the line of no effect; a pooled random-effects diamond only when
three or more comparable randomised trials allow it (reading/pooling.py), labelled as automatic and
exploratory with its I² and caveat."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from deepcritical.models import DESIGNS
from deepcritical.reading.effects import RATIO_MEASURES
from deepcritical.reading.pooling import MEASURE_NAMES, NOT_POOLED, Pooled, StudyEstimate, comparable, pool
from deepcritical.report import svg
from deepcritical.text import same_precision

if TYPE_CHECKING:  # the drawing needs only the record's fields; the stages it comes from load with a run
    from deepcritical.report.forest_data import ForestPlot

# Columns (x in px), in the Cochrane layout: study (first author and year), design, n, the estimate as text,
# then the plot. 900 px wide, drawn at its own size on the page (it scrolls sideways on a phone, never shrinks),
# so its smallest text, 12 px, stays 12 px.
_STUDY, _DESIGN, _N_RIGHT, _ESTIMATE, _PLOT_LEFT, _PLOT_RIGHT = 10, 150, 400, 415, 570, 880
_WIDTH, _ROW, _TOP = 900, 22, 52
_LOG_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
# A narrow range (0.5 to 1.2) gets the ticks in between too.
_DENSE_LOG_TICKS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2, 3, 4, 5)


class NotComparableError(ValueError):
    """No forest plot: the reason, in words a report can print."""


def _fmt(value: float) -> str:
    """A pooled estimate, computed rather than stated: two decimals (none from 100)."""
    return f"{value:.2f}" if abs(value) < 100 else f"{value:.0f}"


def _ticks(low: float, high: float, ratio: bool) -> list[float]:
    if ratio:
        inside = [t for t in _LOG_TICKS if low <= t <= high]
        if len(inside) < 3:
            dense = [t for t in _DENSE_LOG_TICKS if low <= t <= high]
            return dense if len(dense) <= 8 else dense[::2]
        return inside if len(inside) <= 7 else [t for t in inside if t in (0.01, 0.1, 0.5, 1, 2, 10, 100)]
    raw = (high - low) / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step) + 1)]


def forest_svg(estimates: Sequence[StudyEstimate], outcome: str = "") -> str:
    """The plot of the comparable estimates; raises NotComparable with the reason when there are none."""
    studies, reason = comparable(estimates)
    if reason is not None:
        raise NotComparableError(reason)
    return _draw(studies, pool(studies), outcome)


def forest_plot_svg(plot: ForestPlot) -> str:
    """The plot a run recorded (``report.figure_data``), drawn from its recorded numbers, pooled one included."""
    recorded = plot.pooled
    pooled = (
        None
        if recorded is None
        else Pooled(
            plot.measure, recorded.value, recorded.ci_low, recorded.ci_high, recorded.i2, recorded.tau2, recorded.k,
            recorded.caveat,
        )
    )  # fmt: skip
    return _draw(plot.estimates(), pooled, plot.outcome, plot.left_out_sentence(), plot.lower_favours, plot.title())


def _draw(
    studies: Sequence[StudyEstimate],
    pooled: Pooled | None,
    outcome: str,
    left_out: str = "",
    lower_favours: str | None = None,
    heading: str = "",
) -> str:
    measure = studies[0].measure
    ratio = measure in RATIO_MEASURES
    null = 1.0 if ratio else 0.0
    scale = math.log if ratio else float
    bounds = [v for s in studies for v in (s.ci_low, s.ci_high)] + [null]
    if pooled is not None:
        bounds += [pooled.ci_low, pooled.ci_high]
    low, high = scale(min(bounds)), scale(max(bounds))
    pad = (high - low) * 0.05 or 1.0
    low, high = low - pad, high + pad

    def x_of(value: float) -> float:
        return _PLOT_LEFT + (scale(value) - low) / (high - low) * (_PLOT_RIGHT - _PLOT_LEFT)

    unit = f" ({studies[0].unit})" if studies[0].unit else ""  # "mm", or a ratio's "per SD"
    name = MEASURE_NAMES.get(measure, measure) + unit
    rows = len(studies) + (2 if pooled is not None else 0)
    axis_y = _TOP + rows * _ROW + 4
    note = pooled.caveat if pooled is not None else NOT_POOLED
    chars = int((_WIDTH - 2 * _STUDY) / svg.CHAR_WIDTH)
    caveat_lines = _wrapped(note, chars) + (_wrapped(left_out, chars) if left_out else [])
    height = axis_y + 84 + 16 * len(caveat_lines)
    heading = heading or f"{name}{': ' + outcome if outcome else ''}"
    body = [
        svg.text(_STUDY, 20, heading, size=14, weight="bold", width=_WIDTH - 20),
        svg.text(_STUDY, _TOP - 12, "Study", weight="bold"),
        svg.text(_DESIGN, _TOP - 12, "Design", weight="bold"),
        svg.text(_N_RIGHT, _TOP - 12, "n", weight="bold", anchor="end"),
        svg.text(
            _ESTIMATE,
            _TOP - 12,
            f"{measure if len(measure) <= 4 else 'Estimate'} [95% CI]",
            weight="bold",
            width=_PLOT_LEFT - _ESTIMATE,
        ),
    ]
    weights = [1 / se**2 if (se := s.standard_error()) else None for s in studies]
    heaviest = max((w for w in weights if w is not None), default=1.0)
    for index, (study, weight) in enumerate(zip(studies, weights, strict=True)):
        y = _TOP + index * _ROW + _ROW / 2
        half = 3 + 5 * math.sqrt(weight / heaviest) if weight is not None else 4
        body += [
            svg.text(_STUDY, y + 4, study.label, width=_DESIGN - _STUDY - 8),
            svg.text(_DESIGN, y + 4, DESIGNS[study.design].label, width=_N_RIGHT - _DESIGN - 48),
            svg.text(_N_RIGHT, y + 4, f"{study.n:,}" if study.n else "–", anchor="end"),
            svg.line(x_of(study.ci_low), y, x_of(study.ci_high), y),
            svg.rect(x_of(study.value) - half, y - half, 2 * half, 2 * half, fill="#1f4e79", stroke="#1f4e79"),
            # As the study states it, to its own precision (as the study-results table writes it): a fixed two
            # decimals would draw an OR of 0.005 [0.001, 0.020] as 0.01 [0.00, 0.02].
            svg.text(_ESTIMATE, y + 4, "{} [{}, {}]".format(*same_precision(study.value, study.ci_low, study.ci_high))),
        ]
    if pooled is not None:
        body += _diamond(pooled, _TOP + (len(studies) + 1) * _ROW + _ROW / 2, x_of)
    body += _axis(axis_y, x_of, _ticks(math.exp(low) if ratio else low, math.exp(high) if ratio else high, ratio))
    body.append(svg.line(x_of(null), _TOP - 4, x_of(null), axis_y, stroke="#888", dash="4 3"))
    body += _favours(axis_y + 36, x_of(null), lower_favours)
    body.append(
        svg.text((_PLOT_LEFT + _PLOT_RIGHT) / 2, axis_y + 56, name + (" (log scale)" if ratio else ""), anchor="middle")
    )
    for index, caveat in enumerate(caveat_lines):
        body.append(svg.text(_STUDY, axis_y + 82 + 16 * index, caveat))
    title = f"Forest plot of {len(studies)} studies' {name.lower()}" + (f" for {outcome}" if outcome else "")
    return svg.document(_WIDTH, height, title, body)


def _diamond(pooled: Pooled, y: float, x_of: Callable[[float], float]) -> list[str]:
    left, middle, right = x_of(pooled.ci_low), x_of(pooled.value), x_of(pooled.ci_high)
    points = " ".join(
        f"{svg.number(x)},{svg.number(yy)}" for x, yy in ((left, y), (middle, y - 7), (right, y), (middle, y + 7))
    )
    label = f"Pooled (random effects, {pooled.k} RCTs; I² = {pooled.i2:.0%}), exploratory"
    return [
        svg.text(_STUDY, y + 4, label, weight="bold", width=_ESTIMATE - _STUDY - 10),
        f'<polygon points="{points}" fill="#b03a2e" stroke="#b03a2e"/>',
        svg.text(
            _ESTIMATE, y + 4, f"{_fmt(pooled.value)} [{_fmt(pooled.ci_low)}, {_fmt(pooled.ci_high)}]", weight="bold"
        ),
    ]


def _axis(y: float, x_of: Callable[[float], float], ticks: list[float]) -> list[str]:
    parts = [svg.line(_PLOT_LEFT, y, _PLOT_RIGHT, y)]
    for tick in ticks:
        x = x_of(tick)
        parts += [svg.line(x, y, x, y + 5), svg.text(x, y + 18, f"{tick:g}", anchor="middle")]
    return parts


def _favours(y: float, null_x: float, lower_favours: str | None) -> list[str]:
    """Under the axis, each side of the line of no effect, what it favours ("Favours intervention" left for a
    lower-is-better outcome); when the studies' readings do not say, which way is less and which more."""
    if lower_favours is None:
        left, right = "← Lower with intervention", "Higher with intervention →"
    else:
        other = "control" if lower_favours == "intervention" else "intervention"
        left, right = f"← Favours {lower_favours}", f"Favours {other} →"
    # Each label stays inside the plot's columns, however near an edge the line of no effect is.
    # Each beside the line of no effect, moved in when that is near an edge: the right label ends inside the
    # drawing, the left one may reach into the estimates' column (free below the axis). Bold text is wider.
    left_width, right_width = (len(label) * svg.CHAR_WIDTH * 1.1 for label in (left, right))
    right_start = min(null_x + 8, _WIDTH - 10 - right_width)
    left_end = max(min(null_x - 8, right_start - 16), _ESTIMATE + left_width)
    right_start = max(right_start, left_end + 16)
    return [
        svg.text(left_end, y, left, anchor="end", weight="bold"),
        svg.text(right_start, y, right, weight="bold"),
    ]


def _wrapped(words: str, width: int) -> list[str]:
    lines: list[str] = []
    for word in words.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines
