"""What a sweep found, from its results file only: tables (terminal, Markdown) and figures (HTML).

The results file is read with pyarrow; its layout (one row per point, technology and seed; one
column per varied spec path; the sweep's metadata under ``fabricplan.sweep``) is described in
docs/sweep.md. Nothing here re-runs a model.

- **Cost and step time against the x key** (``cluster.gpus`` when varied), one line per
  technology and setting of the other keys, the mean over seeds with the min-max band; a
  *crossover* is where two technologies' lines cross between neighbouring x values (placed by
  linear interpolation in x) and is marked on the plot.
- **Pareto front** of TCO against step time over every point and technology (mean over seeds):
  the options no other option beats on both.
- **Recommendation map** over two varied keys: the technology recommended most often in each
  cell (over seeds and the other keys), as a heat map.

>>> crossings([1.0, 2.0, 4.0], [3.0, 2.0, 1.0], [1.0, 2.0, 3.0])
[2.0]
"""

from __future__ import annotations

import io
import itertools
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricplan.errors import SweepError
from fabricplan.report.quantity import money

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from rich.table import Table

METADATA_KEY = b"fabricplan.sweep"
"""Where a results file keeps its sweep metadata (written by :mod:`fabricplan.sweep.store`)."""
FIGURE_SIZE_IN = (7.0, 3.6)
MAX_SERIES = 8
"""Most combinations of the other keys drawn as lines against x (the first ones are drawn)."""
X_PREFERENCE = ("cluster.gpus", "growth.target_gpus")
A2A = "all_to_all_busbw_GBps"


@dataclass(frozen=True)
class SweepData:
    """A results file's rows and what its metadata says."""

    path: str
    rows: tuple[dict[str, Any], ...]
    keys: tuple[str, ...]
    """The varied spec paths (one column each)."""
    x: str | None
    """The key on the x axis of the line plots (``None``: no numeric key was varied)."""
    technologies: tuple[str, ...]
    backend: str
    seeds: int


@dataclass(frozen=True)
class OptionSummary:
    """One technology at one point, over its seeds."""

    point: int
    settings: tuple[tuple[str, Any], ...]
    technology: str
    tco_usd: tuple[float, float, float] | None
    """Mean, min, max over the seeds that ran."""
    step_s: tuple[float, float, float] | None
    all_to_all_busbw_GBps: tuple[float, float, float] | None  # noqa: N815
    """The collective most sensitive to routing and to the seed (ECMP collisions)."""
    recommended_share: float
    error: str


@dataclass(frozen=True)
class Crossover:
    """Two technologies' lines cross between two x values."""

    series: str
    metric: str
    first: str
    second: str
    x: float


def _numeric(values: Sequence[Any]) -> bool:
    given = [v for v in values if v is not None]
    return bool(given) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in given
    )


def load_sweep(path: str | Path, x: str | None = None) -> SweepData:
    """Read a results file; ``x`` picks the key of the line plots (default: ``cluster.gpus``,
    else the first numeric varied key)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SweepError(
            "FP1015",
            "sweep-report",
            "pyarrow is not installed (results are Parquet)",
            None,
            "pip install 'fabricplan[sweep]'",
        ) from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise SweepError(
            "FP1010", str(path), "is not a readable Parquet file", str(exc)[:80], "check the path"
        ) from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise SweepError(
            "FP1010",
            str(path),
            "is not a fabricplan sweep results file (no sweep metadata)",
            None,
            "give a file written by `fabricplan sweep`",
        )
    meta = json.loads(raw)
    definition = meta["definition"]
    return sweep_data(
        table.to_pylist(),
        tuple(meta["keys"]),
        str(definition["backend"]),
        int(definition["seeds"]),
        path=str(path),
        x=x,
    )


def sweep_data(
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    backend: str,
    seeds: int,
    path: str = "",
    x: str | None = None,
) -> SweepData:
    """A sweep's rows (as :func:`fabricplan.sweep.point.evaluate_point` makes them) with what
    the report needs to know of them; ``x`` as in :func:`load_sweep`.

    >>> row = {"point": 0, "seed": 0, "cluster.gpus": 64, "technology": "roce_v2"}
    >>> sweep_data([row], ["cluster.gpus"], "analytic", 1).x
    'cluster.gpus'
    """
    rows = tuple(rows)
    keys = tuple(keys)
    numeric = [k for k in keys if _numeric([r[k] for r in rows])]
    if x is not None and x not in numeric:
        raise SweepError(
            "FP1014",
            "--x",
            "is not a numeric varied key of this sweep",
            x,
            f"use one of {', '.join(numeric) or '(none: vary a number)'}",
        )
    chosen = x or next((k for k in X_PREFERENCE if k in numeric), numeric[0] if numeric else None)
    technologies = tuple(dict.fromkeys(r["technology"] for r in rows))
    return SweepData(
        path=path,
        rows=rows,
        keys=keys,
        x=chosen,
        technologies=technologies,
        backend=backend,
        seeds=seeds,
    )


def _spread(values: list[float]) -> tuple[float, float, float] | None:
    if not values:
        return None
    return (statistics.fmean(values), min(values), max(values))


def option_summaries(data: SweepData) -> list[OptionSummary]:
    """Every point and technology, summarised over its seeds (in the file's order)."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for row in data.rows:
        groups[(row["point"], row["technology"])].append(row)
    out = []
    for (point, tech), rows in groups.items():
        ran = [r for r in rows if not r["error"]]
        out.append(
            OptionSummary(
                point=point,
                settings=tuple((k, rows[0][k]) for k in data.keys),
                technology=tech,
                tco_usd=_spread([r["tco_usd"] for r in ran if r["tco_usd"] is not None]),
                step_s=_spread([r["step_s"] for r in ran if r["step_s"] is not None]),
                all_to_all_busbw_GBps=_spread([r[A2A] for r in ran if r.get(A2A) is not None]),
                recommended_share=sum(bool(r["recommended"]) for r in rows) / len(rows),
                error=next((r["error"] for r in rows if r["error"]), ""),
            )
        )
    return out


def crossings(xs: Sequence[float], first: Sequence[float], second: Sequence[float]) -> list[float]:
    """The x values where ``first - second`` changes sign between neighbours, interpolated
    linearly in x (cost and step time are close to linear in the GPU count between two
    neighbouring sizes, whatever the spacing of the axis)."""
    found = []
    for i in range(len(xs) - 1):
        d0, d1 = first[i] - second[i], first[i + 1] - second[i + 1]
        if d0 == 0.0 and i == 0:
            found.append(xs[0])
        if d1 == 0.0:
            found.append(xs[i + 1])
        elif d0 * d1 < 0:
            found.append(xs[i] + d0 / (d0 - d1) * (xs[i + 1] - xs[i]))
    return found


def _log_x(values: Sequence[float]) -> bool:
    positive = sorted(v for v in values if v > 0)
    return len(positive) == len(values) and len(positive) > 2 and positive[-1] / positive[0] >= 8


def _series(data: SweepData) -> dict[str, dict[str, list[OptionSummary]]]:
    """Lines against x: per setting of the other keys, per technology, sorted by x."""
    x = data.x
    if x is None:
        return {}
    others = [k for k in data.keys if k != x]
    lines: dict[str, dict[str, list[OptionSummary]]] = {}
    for option in option_summaries(data):
        settings = dict(option.settings)
        if settings[x] is None:
            continue
        label = ", ".join(f"{k}={settings[k]}" for k in others) or "all"
        lines.setdefault(label, {}).setdefault(option.technology, []).append(option)
    for by_tech in lines.values():
        for options in by_tech.values():
            options.sort(key=lambda o: float(dict(o.settings)[x]))
    return dict(list(lines.items())[:MAX_SERIES])


def crossovers(data: SweepData) -> list[Crossover]:
    """Where technologies' TCO and step-time lines cross against the x key."""
    if data.x is None:
        return []
    found = []
    for label, by_tech in _series(data).items():
        techs = list(by_tech)
        for metric in ("tco_usd", "step_s"):
            for i, first in enumerate(techs):
                for second in techs[i + 1 :]:
                    a = {dict(o.settings)[data.x]: getattr(o, metric) for o in by_tech[first]}
                    b = {dict(o.settings)[data.x]: getattr(o, metric) for o in by_tech[second]}
                    xs = sorted(v for v in a if v in b and a[v] and b[v])
                    found += [
                        Crossover(series=label, metric=metric, first=first, second=second, x=x)
                        for x in crossings(
                            [float(v) for v in xs],
                            [a[v][0] for v in xs],
                            [b[v][0] for v in xs],
                        )
                    ]
    return found


def pareto_fronts(data: SweepData) -> list[OptionSummary]:
    """The Pareto front among options of the same cluster size (one front per varied
    ``cluster.gpus`` value: a larger cluster is not an alternative to a smaller one), or over
    every option when the size is not varied."""
    groups: dict[Any, list[OptionSummary]] = defaultdict(list)
    for option in option_summaries(data):
        groups[dict(option.settings).get("cluster.gpus")].append(option)
    return [o for key in groups for o in pareto_front(groups[key])]


def pareto_front(options: Sequence[OptionSummary]) -> list[OptionSummary]:
    """Options no other option beats on both TCO and step time (lower is better), by TCO.

    >>> a = OptionSummary(0, (), "infiniband", (2.0, 2.0, 2.0), (1.0, 1.0, 1.0), None, 1.0, "")
    >>> b = OptionSummary(0, (), "roce_v2", (1.0, 1.0, 1.0), (2.0, 2.0, 2.0), None, 0.0, "")
    >>> c = OptionSummary(1, (), "roce_v2", (3.0, 3.0, 3.0), (3.0, 3.0, 3.0), None, 0.0, "")
    >>> [o.technology for o in pareto_front([a, b, c])]
    ['roce_v2', 'infiniband']
    """
    ran = [o for o in options if o.tco_usd and o.step_s]
    ran.sort(key=lambda o: (o.tco_usd[0], o.step_s[0]) if o.tco_usd and o.step_s else (0, 0))
    front: list[OptionSummary] = []
    best_step = math.inf
    for option in ran:
        assert option.step_s is not None
        if option.step_s[0] < best_step:
            front.append(option)
            best_step = option.step_s[0]
    return front


def recommendation_map(
    data: SweepData, keys: tuple[str, str] | None = None
) -> tuple[tuple[str, str], list[Any], list[Any], list[list[tuple[str, float]]]] | None:
    """Over two varied keys: the values of each, and per cell the technology recommended most
    often with its share (``("", 0)`` where nothing ran). ``None`` with fewer than two keys."""
    if keys is None:
        if len(data.keys) < 2:
            return None
        keys = (data.keys[0], data.keys[1])
    row_key, col_key = keys
    row_values = list(dict.fromkeys(r[row_key] for r in data.rows))
    col_values = list(dict.fromkeys(r[col_key] for r in data.rows))
    counts: dict[tuple[Any, Any], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[tuple[Any, Any], set[tuple[int, int]]] = defaultdict(set)
    for row in data.rows:
        cell = (row[row_key], row[col_key])
        totals[cell].add((row["point"], row["seed"]))
        if row["recommended"]:
            counts[cell][row["technology"]] += 1
    grid = []
    for rv in row_values:
        line = []
        for cv in col_values:
            tally = counts.get((rv, cv), {})
            if not tally:
                line.append(("", 0.0))
                continue
            tech = max(sorted(tally), key=lambda t: tally[t])
            line.append((tech, tally[tech] / len(totals[(rv, cv)])))
        grid.append(line)
    return keys, row_values, col_values, grid


def sweep_overview(data: SweepData) -> dict[str, Any]:
    """The Pareto fronts and the recommendation map as plain data (what the web page draws):
    ``options`` (every point and technology, mean over seeds, ``front`` where it is on its
    cluster size's Pareto front, ``group`` naming that size) and ``map`` (``None`` with fewer
    than two varied keys).

    >>> techs = (("infiniband", 2.0, 1.0, False), ("roce_v2", 1.0, 2.0, True))
    >>> rows = [{"point": 0, "seed": 0, "cluster.gpus": 64, "technology": t, "error": "",
    ...          "tco_usd": tco, "step_s": step, "recommended": rec} for t, tco, step, rec in techs]
    >>> overview = sweep_overview(sweep_data(rows, ["cluster.gpus"], "analytic", 1))
    >>> [(o["technology"], o["front"]) for o in overview["options"]], overview["map"]
    ([('infiniband', True), ('roce_v2', True)], None)
    """
    on_front = {(o.point, o.technology) for o in pareto_fronts(data)}
    options = [
        {
            "point": o.point,
            "settings": dict(o.settings),
            "technology": o.technology,
            "tco_usd": o.tco_usd[0],
            "step_s": o.step_s[0],
            "recommended_share": o.recommended_share,
            "front": (o.point, o.technology) in on_front,
            "group": dict(o.settings).get("cluster.gpus"),
        }
        for o in option_summaries(data)
        if o.tco_usd and o.step_s
    ]
    found = recommendation_map(data)
    chart = None
    if found is not None:
        (row_key, col_key), row_values, col_values, grid = found
        chart = {
            "row_key": row_key,
            "col_key": col_key,
            "row_values": row_values,
            "col_values": col_values,
            "cells": [[{"technology": t, "share": share} for t, share in line] for line in grid],
        }
    return {"options": options, "map": chart}


# --- figures ---------------------------------------------------------------------------------


def _new_figure(rows: int = 1) -> Figure:
    # No pyplot state: two reports in one process never share a figure.
    from matplotlib.figure import Figure

    width, height = FIGURE_SIZE_IN
    return Figure(figsize=(width, height * rows))


def _svg(fig: Figure, name: str) -> str:
    # No date and ids salted by the figure's name, not random: the same results give the same
    # document, and two figures in it never share an id.
    text = _svg_document(fig, name)
    return text[text.index("<svg") :]


def figure_against_x(data: SweepData) -> Figure | None:
    """TCO, step time and all_to_all busbw against the x key, per technology, with seed bands
    and the crossovers."""
    if data.x is None:
        return None
    lines = _series(data)
    fig = _new_figure(rows=3)
    axes = fig.subplots(3, 1, sharex=True)
    marks = crossovers(data)
    all_x = [float(dict(o.settings)[data.x]) for s in lines.values() for v in s.values() for o in v]
    colours = {tech: f"C{i}" for i, tech in enumerate(data.technologies)}
    styles = ("-", "--", ":", "-.")
    for ax, metric, label in (
        (axes[0], "tco_usd", "TCO (USD)"),
        (axes[1], "step_s", "step time (s)"),
        (axes[2], A2A, "all_to_all busbw (GB/s)"),
    ):
        for number, (series, by_tech) in enumerate(lines.items()):
            for tech, options in by_tech.items():
                kept = [o for o in options if getattr(o, metric)]
                xs = [float(dict(o.settings)[data.x]) for o in kept]
                values = [getattr(o, metric) for o in kept]
                name = tech if len(lines) == 1 else f"{tech} ({series})"
                ax.plot(
                    xs,
                    [v[0] for v in values],
                    marker="o",
                    ms=3,
                    color=colours[tech],
                    linestyle=styles[number % len(styles)],
                    label=name,
                )
                if data.seeds > 1:
                    ax.fill_between(
                        xs,
                        [v[1] for v in values],
                        [v[2] for v in values],
                        color=colours[tech],
                        alpha=0.2,
                        linewidth=0,
                    )
        for number, mark in enumerate(m for m in marks if m.metric == metric):
            ax.axvline(mark.x, color="0.4", linestyle=":", linewidth=1)
            ax.annotate(
                f"{mark.x:,.0f}",
                (mark.x, 0.97 - 0.07 * (number % 4)),
                xycoords=("data", "axes fraction"),
                fontsize=7,
                ha="left",
                va="top",
            )
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        if _log_x(all_x):
            from matplotlib.ticker import ScalarFormatter

            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(ScalarFormatter())
    axes[0].legend(fontsize=7)
    axes[2].set_xlabel(data.x)
    band = f"; bands: min-max over {data.seeds} seeds" if data.seeds > 1 else ""
    axes[0].set_title(
        f"TCO and step time against {data.x} ({data.backend} model{band}); dotted: crossovers",
        fontsize=9,
    )
    return fig


def figure_pareto(data: SweepData) -> Figure:
    """TCO against step time for every point and technology, with the Pareto front."""
    fig = _new_figure()
    ax = fig.add_subplot()
    options = option_summaries(data)
    for tech in data.technologies:
        kept = [o for o in options if o.technology == tech and o.tco_usd and o.step_s]
        ax.scatter(
            [o.step_s[0] for o in kept if o.step_s],
            [o.tco_usd[0] for o in kept if o.tco_usd],
            s=12,
            label=tech,
        )
    groups: dict[Any, list[OptionSummary]] = defaultdict(list)
    for option in options:
        groups[dict(option.settings).get("cluster.gpus")].append(option)
    for number, group in enumerate(groups.values()):
        front = pareto_front(group)
        ax.plot(
            [o.step_s[0] for o in front if o.step_s],
            [o.tco_usd[0] for o in front if o.tco_usd],
            color="black",
            linewidth=1,
            label="Pareto front" + (" per cluster size" if len(groups) > 1 else "")
            if number == 0
            else None,
        )
    ax.set_xlabel("step time (s)")
    ax.set_ylabel("TCO (USD)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("TCO against step time: every point and technology")
    return fig


def figure_map(data: SweepData) -> Figure | None:
    """The recommendation map over the first two varied keys, as a heat map."""
    found = recommendation_map(data)
    if found is None:
        return None
    (row_key, col_key), row_values, col_values, grid = found
    techs = list(data.technologies)
    codes = [[techs.index(t) if t else math.nan for t, _ in line] for line in grid]
    fig = _new_figure()
    ax = fig.add_subplot()
    from matplotlib.colors import ListedColormap

    palette = [f"C{i}" for i in range(max(len(techs), 1))]  # the line plots' colours
    ax.imshow(
        codes, cmap=ListedColormap(palette), vmin=-0.5, vmax=len(palette) - 0.5, aspect="auto"
    )
    for i, line in enumerate(grid):
        for j, (tech, share) in enumerate(line):
            text = f"{tech}\n{share:.0%}" if tech and share < 1 else tech or "-"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white")
    ax.set_xticks(range(len(col_values)), [str(v) for v in col_values], fontsize=7)
    ax.set_yticks(range(len(row_values)), [str(v) for v in row_values], fontsize=7)
    ax.set_xlabel(col_key)
    ax.set_ylabel(row_key)
    ax.set_title("Recommended technology")
    return fig


def figures(data: SweepData) -> Iterator[tuple[str, Figure]]:
    """Every figure of the report with its title."""
    for title, _, fig in _named_figures(data):
        yield title, fig


def _named_figures(data: SweepData) -> Iterator[tuple[str, str, Figure]]:
    against = figure_against_x(data)
    if against is not None:
        yield "Cost and step time against " + str(data.x), "sweep_against_x", against
    yield "Pareto front", "sweep_pareto", figure_pareto(data)
    heat = figure_map(data)
    if heat is not None:
        yield "Recommendation map", "sweep_map", heat


def figure_files(data: SweepData) -> list[tuple[str, str]]:
    """Every figure as a standalone SVG document: (file name, text), e.g. for docs/figures."""
    return [(f"{name}.svg", _svg_document(fig, title)) for title, name, fig in _named_figures(data)]


def figure_svgs(data: SweepData) -> list[tuple[str, str]]:
    """Every figure of the report as (title, inline ``<svg>`` element), as the HTML report and
    the web app's sweep page show them."""
    return [(title, _svg(fig, title)) for title, fig in figures(data)]


def _svg_document(fig: Figure, name: str) -> str:
    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context({"svg.hashsalt": f"fabricplan-{name}"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


# --- tables ----------------------------------------------------------------------------------


def _cell(spread: tuple[float, float, float] | None, kind: str, seeds: int) -> str:
    if spread is None:
        return "-"
    mean, low, high = spread
    text = money(mean) if kind == "usd" else f"{mean:.3f}"
    if seeds > 1 and high > low:
        text += f" ({money(low)}-{money(high)})" if kind == "usd" else f" ({low:.3f}-{high:.3f})"
    return text


def table_rows(data: SweepData) -> tuple[list[str], list[list[str]]]:
    """Per point: its settings, the recommendation, and TCO and step time per technology."""
    header = [*data.keys, "recommended"]
    for tech in data.technologies:
        header += [f"{tech} TCO", f"{tech} step (s)"]
    by_point: dict[int, dict[str, OptionSummary]] = defaultdict(dict)
    for option in option_summaries(data):
        by_point[option.point][option.technology] = option
    body = []
    for point in sorted(by_point):
        options = by_point[point]
        first = next(iter(options.values()))
        best = max(options.values(), key=lambda o: o.recommended_share)
        winner = best.technology if best.recommended_share > 0 else "-"
        if 0 < best.recommended_share < 1:
            winner += f" ({best.recommended_share:.0%})"
        line = [str(v) for _, v in first.settings] + [winner]
        for tech in data.technologies:
            found = options.get(tech)
            if found is None or found.tco_usd is None:
                line += ["did not run" if found and found.error else "-", "-"]
            else:
                line += [
                    _cell(found.tco_usd, "usd", data.seeds),
                    _cell(found.step_s, "s", data.seeds),
                ]
        body.append(line)
    return header, body


def winner_changes(data: SweepData) -> list[tuple[str, str, str, Any, Any]]:
    """Where the recommended technology changes between neighbouring x values: the other keys'
    setting, the winner before and after, and the two x values."""
    key = data.x
    found: list[tuple[str, str, str, Any, Any]] = []
    if key is None:
        return found
    for label, by_tech in _series(data).items():
        best: dict[Any, tuple[float, str]] = {}
        for tech, options in by_tech.items():
            for option in options:
                x = dict(option.settings)[key]
                if option.recommended_share > best.get(x, (0.0, ""))[0]:
                    best[x] = (option.recommended_share, tech)
        xs = sorted(best)
        found += [
            (label, best[a][1], best[b][1], a, b)
            for a, b in itertools.pairwise(xs)
            if best[a][1] != best[b][1]
        ]
    return found


def crossover_rows(data: SweepData) -> tuple[list[str], list[list[str]]]:
    """Each crossover: the series, the figure, the two technologies and where; and each change
    of the recommendation between neighbouring x values."""
    header = ["other keys", "figure", "technologies", f"at {data.x}"]
    body = [
        [
            c.series,
            "TCO" if c.metric == "tco_usd" else "step time",
            f"{c.first} / {c.second}",
            f"{c.x:,.0f}",
        ]
        for c in crossovers(data)
    ]
    body += [
        [label, "recommendation", f"{before} -> {after}", f"between {a} and {b}"]
        for label, before, after, a, b in winner_changes(data)
    ]
    return header, body


def pareto_rows(data: SweepData) -> tuple[list[str], list[list[str]]]:
    """The Pareto front, cheapest first."""
    header = [*data.keys, "technology", "TCO", "step (s)"]
    body = [
        [
            *(str(v) for _, v in o.settings),
            o.technology,
            _cell(o.tco_usd, "usd", 1),
            _cell(o.step_s, "s", 1),
        ]
        for o in pareto_fronts(data)
    ]
    return header, body


def failure_rows(data: SweepData) -> tuple[list[str], list[list[str]]]:
    """Points and technologies that did not run, with the error."""
    header = [*data.keys, "technology", "error"]
    body = [
        [*(str(v) for _, v in o.settings), o.technology, o.error]
        for o in option_summaries(data)
        if o.error
    ]
    return header, body


def _sections(data: SweepData) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    sections = [("Points", table_rows(data))]
    if data.x is not None:
        sections.append(("Crossovers", crossover_rows(data)))
    per_size = " per cluster size" if "cluster.gpus" in data.keys else ""
    sections.append((f"Pareto front{per_size} (TCO against step time)", pareto_rows(data)))
    failures = failure_rows(data)
    if failures[1]:
        sections.append(("Did not run", failures))
    return sections


def _title(data: SweepData) -> str:
    points = len({r["point"] for r in data.rows})
    return (
        f"Sweep over {', '.join(data.keys)}: {points} points, {data.seeds} seed(s),"
        f" {data.backend} model"
    )


def sweep_tables(data: SweepData) -> list[Table]:
    """The report's tables for the terminal (rich)."""
    from rich.table import Table

    out: list[Table] = []
    for title, (header, body) in _sections(data):
        table = Table(title=title if out else f"{_title(data)}\n{title}")
        for name in header:
            table.add_column(name)
        for line in body:
            table.add_row(*line)
        out.append(table)
    return out


def sweep_markdown(data: SweepData) -> str:
    """The report's tables as Markdown."""
    out = [f"# {_title(data)}", ""]
    for title, (header, body) in _sections(data):
        out += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        out += [
            "| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |" for line in body
        ]
        out.append("")
    return "\n".join(out)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1000px; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.85rem; }
th, td { padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 1rem 0; } svg { max-width: 100%; height: auto; }
"""


def sweep_html(data: SweepData) -> str:
    """The report as one self-contained HTML document (inline SVG figures, no fetches)."""
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(_title(data))}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(_title(data))}</h1>",
    ]
    for title, svg in figure_svgs(data):
        out.append(f"<h2>{escape(title)}</h2><figure>{svg}</figure>")
    for title, (header, body) in _sections(data):
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        rows = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in line) + "</tr>" for line in body
        )
        out.append(f"<h2>{escape(title)}</h2><table><tr>{head}</tr>{rows}</table>")
    out.append("</body></html>")
    return "\n".join(out)
