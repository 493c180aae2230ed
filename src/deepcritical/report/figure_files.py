"""A run's figure files, drawn from the numbers its record holds (``report.figure_data``): ``prisma.svg``,
and ``forest-N.svg`` with ``forest-N.png`` for each forest plot. The PNG is the SVG rasterised by resvg
(the ``resvg-py`` wheel, 1.4 MB, no other dependency), so one drawing serves both files; measured against
matplotlib in bench/plots_bench.py."""

from __future__ import annotations

from pathlib import Path

from deepcritical.report.figure_data import FLOW_FILE, Figures, StudyFlow
from deepcritical.report.forest import forest_plot_svg
from deepcritical.report.prisma import FlowCounts, prisma_svg

# One and a half times the SVG's size (~1,500 px wide): sharp enough for a slide; resvg's time grows with the
# pixels (text most: a 12-study plot 70 ms at 1x, 260 ms at 2x; bench/plots_bench.py).
PNG_ZOOM = 1.5


def flow_counts(flow: StudyFlow) -> FlowCounts:
    """The diagram's counts; FlowCounts derives screened and included, which must be the record's."""
    counts = FlowCounts(flow.identified, flow.duplicates, flow.excluded)
    if (counts.screened, counts.included) != (flow.screened, flow.included):
        raise ValueError(
            f"the flow does not add up: {counts.screened} screened and {counts.included} included by its counts, "
            f"{flow.screened} and {flow.included} recorded"
        )
    return counts


def png_of(svg: str) -> bytes:
    """The SVG rasterised by resvg, on white."""
    import resvg_py

    return bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff", zoom=PNG_ZOOM))


def write_figures(figures: Figures, out_dir: Path) -> list[Path]:
    """Write the run's figure files into ``out_dir``, and remove the figures an earlier run left there (a folder
    given to ``--out`` again: its forest plots are another question's); return their paths."""
    written: list[Path] = []
    for stale in [out_dir / FLOW_FILE, *out_dir.glob("forest-*.svg"), *out_dir.glob("forest-*.png")]:
        stale.unlink(missing_ok=True)
    if figures.flow is not None:
        path = out_dir / FLOW_FILE
        path.write_text(prisma_svg(flow_counts(figures.flow)), encoding="utf-8")
        written.append(path)
    for plot in figures.forest_plots:
        drawing = forest_plot_svg(plot)
        svg_path, png_path = out_dir / f"{plot.file}.svg", out_dir / f"{plot.file}.png"
        svg_path.write_text(drawing, encoding="utf-8")
        png_path.write_bytes(png_of(drawing))
        written += [svg_path, png_path]
    return written
