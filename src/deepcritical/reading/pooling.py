"""Which studies' estimates can stand on one forest plot, and their pooled random-effects estimate.

Comparable: one measure, and one unit (a mean difference's; a ratio's only when it is per unit: "per
SD"). Pooled only from three or more randomised trials of one measure, never across designs or measures, by statsmodels'
meta-analysis module (Paule-Mandel tau², the estimator it iterates by default); a pooling done by a
program from extracted numbers is automatic and exploratory, and is labelled so wherever it is shown.
The standard error of each estimate is taken from its interval (on the log scale for a ratio)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from deepcritical.models import StudyDesign
from deepcritical.reading.effects import RATIO_MEASURES

# Measures a forest plot draws: ratios on a log axis, differences on a linear one.
PLOTTED_MEASURES = frozenset({"OR", "RR", "HR", "IRR", "MD", "SMD", "RD"})
MIN_POOLED = 3
MEASURE_NAMES = {
    "HR": "Hazard ratio",
    "OR": "Odds ratio",
    "RR": "Risk ratio",
    "IRR": "Incidence rate ratio",
    "MD": "Mean difference",
    "SMD": "Standardised mean difference",
    "RD": "Risk difference",
}
NOT_POOLED = (
    "No pooled estimate: an automatic pooling is drawn only from three or more randomised trials of one "
    "measure, and never across designs."
)
POOLED_CAVEAT = (
    "Automatic, exploratory pooling of the estimates the studies' texts state (random effects, "
    "Paule-Mandel): no check of risk of bias, of outcome definitions or time points, or of the studies' "
    "independence; not a systematic review's meta-analysis."
)


@dataclass(frozen=True, slots=True)
class StudyEstimate:
    """One study's estimate as a forest plot draws it."""

    label: str
    measure: str
    value: float
    ci_low: float
    ci_high: float
    design: StudyDesign = "unknown"
    n: int | None = None
    unit: str | None = None
    ci_level: float = 95.0

    def standard_error(self) -> float | None:
        """From the interval, on the scale the plot and the pooling use; None if it has no width."""
        z = NormalDist().inv_cdf(0.5 + self.ci_level / 200)
        if self.measure in RATIO_MEASURES:
            if self.ci_low <= 0 or self.ci_high <= 0:
                return None
            width = math.log(self.ci_high) - math.log(self.ci_low)
        else:
            width = self.ci_high - self.ci_low
        return width / (2 * z) if width > 0 else None


@dataclass(frozen=True, slots=True)
class Pooled:
    """A random-effects estimate with its interval, I² (as a share, 0..1), tau² and the trials pooled."""

    measure: str
    value: float
    ci_low: float
    ci_high: float
    i2: float
    tau2: float
    k: int
    caveat: str = POOLED_CAVEAT


def comparable(estimates: Sequence[StudyEstimate]) -> tuple[list[StudyEstimate], str | None]:
    """The estimates one plot can hold, or none and the reason: at least two, of one measure (one unit
    for differences), each with a value inside a usable interval (positive for a ratio)."""
    usable = [
        e
        for e in estimates
        if e.measure in PLOTTED_MEASURES
        and e.ci_low <= e.value <= e.ci_high
        and (e.measure not in RATIO_MEASURES or e.ci_low > 0)
    ]
    if len(usable) < 2:
        return [], "fewer than two studies state an estimate with its confidence interval"
    measures = {e.measure for e in usable}
    if len(measures) > 1:
        return [], f"the studies state different measures ({', '.join(sorted(measures))}), which are not comparable"
    if len({e.unit for e in usable}) > 1:
        if usable[0].measure in RATIO_MEASURES:  # an odds ratio per SD is not one of two groups
            return [], "the ratios are per different units (" + ", ".join(
                sorted({e.unit or "between groups" for e in usable})
            ) + ")"
        return [], "the mean differences are in different units"
    return usable, None


def pool(estimates: Sequence[StudyEstimate]) -> Pooled | None:
    """The random-effects estimate of three or more comparable randomised trials; None otherwise."""
    plotted, _reason = comparable(estimates)
    trials = [e for e in plotted if e.design == "randomized_controlled_trial"]
    if len(trials) < MIN_POOLED or len(trials) != len(plotted):
        return None  # never across designs: a plot with other designs shows no pooled estimate
    errors = [e.standard_error() for e in trials]
    if any(se is None for se in errors):
        return None
    import numpy as np
    from statsmodels.stats.meta_analysis import combine_effects

    ratio = trials[0].measure in RATIO_MEASURES
    effects = np.array([math.log(e.value) if ratio else e.value for e in trials])
    variances = np.array([se * se for se in errors if se is not None])
    # Trials that agree exactly give Q = 0, and statsmodels divides by it for I² (which is 0 then, below).
    with np.errstate(divide="ignore"):
        result = combine_effects(effects, variances, method_re="iterated", use_t=False)
    low, high = result.conf_int(use_t=False)[1]  # (fixed, random, fixed WLS, random WLS): the random-effects one
    back = math.exp if ratio else float
    return Pooled(
        measure=trials[0].measure,
        value=back(float(result.mean_effect_re)),
        ci_low=back(float(low)),
        ci_high=back(float(high)),
        i2=max(0.0, float(result.i2)),  # I² = max(0, (Q - df) / Q): statsmodels leaves it negative (or -inf)
        tau2=max(0.0, float(result.tau2)),
        k=len(trials),
    )
