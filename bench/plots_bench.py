r"""Hand-written SVG against matplotlib for the run's plots (issue 25, items 4-6): import time, render
time and install size; the PNG rasterised from the SVG by resvg (resvg-py) against matplotlib's Agg PNG;
what the pooled estimate (statsmodels) costs; and what the figures add to the SGLT2 demo run.

    python bench/plots_bench.py [--repeat 20]

The same forest plot (12 studies, hazard ratios on a log axis, a pooled diamond) is drawn both ways:
by deepcritical.report.forest, and by matplotlib's Agg backend to SVG (errorbars, squares, a log x axis).
Import times are measured in a fresh interpreter each; matplotlib's part is skipped (and said so)
when it is not installed (it is not a dependency: pip install matplotlib to compare).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deepcritical.reading.pooling import StudyEstimate, pool
from deepcritical.report.forest import forest_svg
from deepcritical.report.prisma import FlowCounts, prisma_svg

STUDIES = [
    StudyEstimate(f"Trial {i + 1}", "HR", v, lo, hi, "randomized_controlled_trial", 500 + 250 * i)
    for i, (v, lo, hi) in enumerate(
        [
            (0.62, 0.49, 0.77), (0.87, 0.72, 1.06), (0.98, 0.82, 1.17), (0.83, 0.71, 0.97), (0.74, 0.65, 0.85),
            (0.91, 0.80, 1.04), (0.70, 0.59, 0.83), (1.05, 0.88, 1.25), (0.79, 0.69, 0.90), (0.86, 0.73, 1.01),
            (0.68, 0.52, 0.89), (0.95, 0.81, 1.11),
        ]
    )
]  # fmt: skip
FLOW = FlowCounts(
    {"PubMed": 40, "Europe PMC": 25, "ClinicalTrials.gov": 12, "Web": 8}, 17, {"off-topic": 30, "retracted": 1}
)
# matplotlib and the packages only it brings (numpy is the project's already).
MATPLOTLIB_DISTS = ("matplotlib", "contourpy", "cycler", "fonttools", "kiwisolver", "pillow", "pyparsing")
STATSMODELS_DISTS = ("statsmodels", "pandas", "patsy", "scipy")


def installed_mb(names: tuple[str, ...]) -> float | None:
    total = 0
    for name in names:
        try:
            files = importlib.metadata.distribution(name).files or []
        except importlib.metadata.PackageNotFoundError:
            return None
        total += sum(Path(str(f.locate())).stat().st_size for f in files if Path(str(f.locate())).is_file())
    return total / 1e6


def import_ms(statement: str, already: str = "pass") -> float | None:
    """Milliseconds ``statement`` takes in a fresh interpreter that has run ``already`` first."""
    code = f"{already}; import time; t = time.perf_counter(); {statement}; print((time.perf_counter() - t) * 1000)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    return float(done.stdout) if done.returncode == 0 else None


def timed_ms(function: object, repeat: int) -> float:
    assert callable(function)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def matplotlib_forest(form: str = "svg") -> str | bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 5))
    rows = list(range(len(STUDIES), 0, -1))
    values = [s.value for s in STUDIES]
    errors = [[s.value - s.ci_low for s in STUDIES], [s.ci_high - s.value for s in STUDIES]]
    axes.errorbar(values, rows, xerr=errors, fmt="s", color="#1f4e79")
    axes.axvline(1.0, linestyle="--", color="#888")
    axes.set_xscale("log")
    axes.set_yticks(rows, [s.label for s in STUDIES])
    axes.set_xlabel("Hazard ratio (log scale)")
    buffer: io.StringIO | io.BytesIO = io.StringIO() if form == "svg" else io.BytesIO()
    figure.savefig(buffer, format=form, dpi=200)
    plt.close(figure)
    return buffer.getvalue()


def png_comparison(repeat: int) -> None:
    """The PNG of the same plot: resvg rasterising the one SVG, against matplotlib drawing it again."""
    from deepcritical.report.figure_files import PNG_ZOOM, png_of

    drawing = forest_svg(STUDIES, "death")
    resvg_import = import_ms("import resvg_py")
    png_of(drawing)  # the first call loads the system fonts
    resvg_ms = timed_ms(lambda: png_of(drawing), repeat)
    first = import_ms(
        "png_of(d)",
        already="from deepcritical.report.figure_files import png_of; "
        "from deepcritical.report.forest import forest_svg; "
        "from deepcritical.reading.pooling import StudyEstimate as S; "
        "d = forest_svg([S(str(i), 'HR', 0.8, 0.6, 1.0) for i in range(12)])",
    )
    size = installed_mb(("resvg-py",))
    print(
        f"PNG by resvg-py (the SVG rasterised, zoom {PNG_ZOOM:g}): import {resvg_import:.0f} ms; "
        f"first PNG in a process {first:.0f} ms (system fonts loaded); then {resvg_ms:.1f} ms a plot; "
        f"{len(png_of(drawing)) / 1024:.0f} KiB; install size {size or 0:.1f} MB"
    )
    if import_ms("import matplotlib") is None:
        print("PNG by matplotlib: not installed (pip install matplotlib to compare)")
        return
    matplotlib_forest("png")
    mpl_ms = timed_ms(lambda: matplotlib_forest("png"), repeat)
    print(f"PNG by matplotlib (Agg, 200 dpi, a second drawing of the plot): {mpl_ms:.1f} ms a plot")


DEMO_QUESTION = "Do SGLT2 inhibitors improve outcomes in heart failure?"
# In a fresh interpreter with the run's own modules loaded (as at the end of a run): the figures' numbers
# from the recorded evidence, then the files.
DEMO_FIGURES = """
import json, sys, time
from pathlib import Path
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.report.render import counted_items
folder = Path(sys.argv[1])
outcome = ResearchOutcome.model_validate(json.loads((folder / "run.json").read_text()) | {"markdown": ""})
evidence = {item.id: item for item in outcome.evidence}
counted = counted_items(outcome.question, evidence, ())
t0 = time.perf_counter()
from deepcritical.report.figure_data import build_figures
figures = build_figures(counted, evidence, outcome.sources, {})
t1 = time.perf_counter()
from deepcritical.report.figure_files import write_figures
written = write_figures(figures, folder / "again")
t2 = time.perf_counter()
print(f"{(t1 - t0) * 1000:.0f} {(t2 - t1) * 1000:.0f} {len(written)} {len(figures.rows)} {len(figures.forest_plots)}")
"""


def demo_run_figures() -> None:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        ran = subprocess.run(
            [sys.executable, "-m", "deepcritical", "research", DEMO_QUESTION, "--demo", "--out", str(out)],
            capture_output=True,
            text=True,
            check=False,
            env={"DEEPCRITICAL_HOME": str(Path(folder) / "home"), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        )
        if ran.returncode != 0:
            print(f"SGLT2 demo run failed: {ran.stderr.strip().splitlines()[-1:]}")
            return
        (out / "again").mkdir()
        done = subprocess.run(
            [sys.executable, "-c", DEMO_FIGURES, str(out)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            print(f"SGLT2 demo figures failed: {done.stderr.strip().splitlines()[-1:]}")
            return
        numbers_ms, files_ms, files, rows, plots = (float(x) for x in done.stdout.split())
        print(
            f"SGLT2 demo run's figures, fresh process: numbers {numbers_ms:.0f} ms ({rows:.0f} result rows, "
            f"{plots:.0f} forest plot(s), every collected item counted: an upper bound), files {files_ms:.0f} ms "
            f"({files:.0f}: prisma.svg, forest SVG and PNG; resvg import and fonts included); "
            f"together {numbers_ms + files_ms:.0f} ms (target < 1 s; no pooling, so no statsmodels import)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    # A run has the project's models (pydantic) loaded long before it draws: they are not the plots' cost.
    own_import = import_ms(
        "import deepcritical.report.forest, deepcritical.report.prisma", already="import deepcritical.models"
    )
    own_ms = timed_ms(lambda: forest_svg(STUDIES, "death"), args.repeat)
    flow_ms = timed_ms(lambda: prisma_svg(FLOW), args.repeat)
    print(f"hand-written SVG: import {own_import:.0f} ms; forest plot {own_ms:.2f} ms; PRISMA flow {flow_ms:.2f} ms;")
    print(f"    {len(forest_svg(STUDIES, 'death')) / 1024:.1f} KiB per plot; install size 0 MB (no dependency)")

    mpl_import = import_ms("import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot")
    if mpl_import is None:
        print("matplotlib: not installed (pip install matplotlib to compare)")
    else:
        matplotlib_forest()  # the first figure builds the font cache and the backend
        mpl_ms = timed_ms(matplotlib_forest, args.repeat)
        size = installed_mb(MATPLOTLIB_DISTS)
        print(f"matplotlib (Agg, SVG): import {mpl_import:.0f} ms; forest plot {mpl_ms:.1f} ms;")
        packages = ", ".join(MATPLOTLIB_DISTS)
        print(f"    {len(matplotlib_forest()) / 1024:.1f} KiB per plot; install size {size or 0:.0f} MB ({packages})")

    png_comparison(args.repeat)
    demo_run_figures()

    sm_import = import_ms("from statsmodels.stats.meta_analysis import combine_effects")
    if sm_import is None:
        print("statsmodels: not installed")
        return
    pool(STUDIES)
    pool_ms = timed_ms(lambda: pool(STUDIES), args.repeat)
    size = installed_mb(STATSMODELS_DISTS)
    print(
        f"pooled estimate (statsmodels combine_effects): import {sm_import:.0f} ms, once per process; "
        f"{pool_ms:.2f} ms per pooling; install size {size or 0:.0f} MB ({', '.join(STATSMODELS_DISTS)})"
    )
    whole = import_ms(
        already="import deepcritical.models",
        statement="from deepcritical.reading.pooling import StudyEstimate as S; "
        "from deepcritical.report.forest import forest_svg; "
        "from deepcritical.report.prisma import FlowCounts, prisma_svg; "
        "forest_svg([S(str(i), 'HR', 0.8, 0.6, 1.0, 'randomized_controlled_trial', 100) for i in range(3)]); "
        "prisma_svg(FlowCounts({'PubMed': 9}, 1, {'off-topic': 2}))",
    )
    print(
        f"a run's plots in a fresh process (imports, pooling, forest plot, PRISMA flow): {whole:.0f} ms (target < 1 s)"
    )


if __name__ == "__main__":
    main()
