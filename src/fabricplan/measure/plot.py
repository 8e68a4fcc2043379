"""The ``check-bench`` figure: each measured curve against the model's expected band.

One panel per test and quantity (``all_reduce`` busbw, ``write_bw`` bandwidth, ``write_lat``
latency), size on a log-2 axis; a line per run, the model's value dashed with its band shaded.
matplotlib is imported here only, through its object API (no pyplot state), with the Agg canvas.
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import Literal

from fabricplan.measure.check import BenchCheckResult
from fabricplan.measure.expectation import JudgedRecord

PlotFormat = Literal["png", "svg"]
PANEL_SIZE_IN = (7.5, 3.4)
PNG_DPI = 120
_LABELS = {
    "busbw_GBps": "busbw (GB/s)",
    "bw_gbps": "bandwidth (Gb/s)",
    "latency_us": "latency (us)",
}


def _panels(judged: tuple[JudgedRecord, ...]) -> dict[tuple[str, str], list[JudgedRecord]]:
    panels: dict[tuple[str, str], list[JudgedRecord]] = defaultdict(list)
    for j in judged:
        if j.measurement.size_bytes > 0:
            panels[(j.measurement.test, j.measurement.quantity)].append(j)
    return dict(panels)


def bench_figure(result: BenchCheckResult, fmt: PlotFormat = "png") -> bytes:
    """The figure as PNG or SVG bytes.

    >>> from fabricplan.measure.check import check_bench
    >>> from fabricplan.measure.reader import read_bench_text
    >>> log = '''#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong
    ...  1048576 262144 float sum -1 60.1 17.45 32.72 0 59.8 17.53 32.87 0
    ... '''
    >>> svg = bench_figure(check_bench([read_bench_text(log, "allreduce.log")]), "svg")
    >>> svg.startswith(b"<?xml")
    True
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = _panels(result.judged)
    count = max(1, len(panels))
    fig = Figure(figsize=(PANEL_SIZE_IN[0], PANEL_SIZE_IN[1] * count))
    FigureCanvasAgg(fig)
    for index, ((test, quantity), rows) in enumerate(sorted(panels.items()), 1):
        ax = fig.add_subplot(count, 1, index)
        runs: dict[tuple[str, int], list[JudgedRecord]] = defaultdict(list)
        for j in rows:
            runs[(j.measurement.file, j.measurement.run)].append(j)
        for (path, run), members in runs.items():
            members.sort(key=lambda j: j.measurement.size_bytes)
            sizes = [j.measurement.size_bytes for j in members]
            ranks = members[0].measurement.ranks
            label = f"{path.rsplit('/', 1)[-1]}#{run}" + (f" ({ranks} GPUs)" if ranks else "")
            line = ax.plot(
                sizes, [j.measurement.value for j in members], marker="o", ms=3, label=label
            )[0]
            expected = [j for j in members if j.expected is not None]
            if expected:
                xs = [j.measurement.size_bytes for j in expected]
                ax.plot(
                    xs,
                    [j.expected.value for j in expected if j.expected],
                    ls="--",
                    color=line.get_color(),
                    lw=1,
                    label=f"{label} expected",
                )
                ax.fill_between(
                    xs,
                    [j.expected.low for j in expected if j.expected],
                    [j.expected.high for j in expected if j.expected],
                    color=line.get_color(),
                    alpha=0.15,
                    lw=0,
                )
            failed = [j for j in members if j.status == "fail"]
            if failed:
                ax.plot(
                    [j.measurement.size_bytes for j in failed],
                    [j.measurement.value for j in failed],
                    ls="none",
                    marker="x",
                    ms=7,
                    color="red",
                )
        ax.set_xscale("log", base=2)
        if quantity == "latency_us":
            ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(_LABELS.get(quantity, quantity))
        ax.set_title(f"{test}: measured vs expected" if result.compared else f"{test}: measured")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=PNG_DPI)
    return buffer.getvalue()
