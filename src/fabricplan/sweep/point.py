"""One sweep point, evaluated: one row per technology and seed.

The point runs through the library's public path, as ``fabricplan compare`` does:
:func:`fabricplan.evaluate.evaluate_feasible` on the chosen backend (the flow and packet
simulators run behind the same seam, each seed handed over in
:class:`~fabricplan.model.results.PerfRequest`), then the decision's ranking
(:func:`fabricplan.recommend.decision.decide`). ``compare`` goes on to
:func:`~fabricplan.recommend.decision.recommend`, which adds up to ten re-evaluations per
technology to find the cluster size and team that would flip the winner; a sweep answers those
questions by varying the keys themselves, and the winner of ``recommend`` is by construction the
winner of ``decide``, so the sweep skips them.

A point that fails (a model's error or any exception) gives one row per technology with the
error and no figures; the sweep goes on. A technology that cannot be designed at a point gives
its row with the designer's reason in ``error``.

>>> from fabricplan.sweep.grid import point_tasks, sweep_definition
>>> definition = sweep_definition({"cluster": {"gpus": 256}}, ["fabric.oversubscription=1,2"])
>>> tasks, _ = point_tasks(definition.model_copy(update={"backend": "fake"}))
>>> result = evaluate_point(tasks[1])
>>> [(r["technology"], r["seed"], r["error"]) for r in result.rows]
[('infiniband', 0, ''), ('roce_v2', 0, '')]
"""

from __future__ import annotations

from typing import Any

from fabricplan.errors import FabricPlanError
from fabricplan.evaluate import evaluate_feasible
from fabricplan.model.base import Frozen
from fabricplan.model.results import Evaluation, PerfRequest
from fabricplan.recommend.decision import decide
from fabricplan.sweep.grid import SWEEP_COLLECTIVES, PointTask

FIGURE_COLUMNS: dict[str, str] = {
    "switches_total": "int64",
    "tiers": "int64",
    "capex_usd": "float64",
    "tco_usd": "float64",
    "tco_with_gpu_idle_usd": "float64",
    "step_s": "float64",
    **{
        f"{op}_{figure}": "float64"
        for op in SWEEP_COLLECTIVES
        for figure in ("busbw_GBps", "time_us")
    },
    "score": "float64",
}
"""The figures of a row, with their Parquet type (``None`` where the point or technology
failed)."""
ROW_COLUMNS: dict[str, str] = {
    "point": "int64",
    "point_key": "string",
    "technology": "string",
    "seed": "int64",
    "sim_seed": "int64",
    **FIGURE_COLUMNS,
    "recommended": "bool",
    "error": "string",
}
"""Every row's own columns; the varied keys' columns come after ``point_key``."""


class PointResult(Frozen):
    """The rows of one point (every technology, every seed asked for)."""

    index: int
    key: str
    rows: tuple[dict[str, Any], ...]
    failed: bool
    """True when the point itself failed (not when one technology could not be designed)."""


def _figures(evaluation: Evaluation, size_bytes: int) -> dict[str, Any]:
    design, cost, perf = evaluation.design, evaluation.cost, evaluation.performance
    row: dict[str, Any] = {
        "switches_total": sum(design.switches.values()),
        "tiers": design.tiers,
        "capex_usd": cost.capex_usd,
        "tco_usd": cost.tco_usd,
        "tco_with_gpu_idle_usd": cost.tco_with_gpu_idle_usd,
        "step_s": perf.step.step_s if perf.step is not None else None,
    }
    for op in SWEEP_COLLECTIVES:
        point = next(
            (p for p in perf.collectives if p.collective == op and p.size_bytes == size_bytes),
            None,
        )
        row[f"{op}_busbw_GBps"] = point.busbw_GBps if point else None
        row[f"{op}_time_us"] = point.time_us if point else None
    return row


def _empty_row(
    task: PointTask, technology: str, seed: int, sim_seed: int, error: str
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "point": task.index,
        "point_key": task.key,
        **task.settings,
        "technology": technology,
        "seed": seed,
        "sim_seed": sim_seed,
    }
    row.update(dict.fromkeys(FIGURE_COLUMNS))
    row["recommended"] = False
    row["error"] = error
    return row


def _seed_rows(task: PointTask, seed: int, sim_seed: int) -> list[dict[str, Any]]:
    valid = task.valid
    request = PerfRequest(
        collectives=SWEEP_COLLECTIVES,
        sizes_bytes=(task.size_bytes,),
        p2p=False,
        seed=sim_seed,
    )
    evaluations, infeasible = evaluate_feasible(valid, backend=task.backend, request=request)
    decision = decide(evaluations, valid)
    # The preset's objective: total dollars over the horizon (seconds under max_performance).
    totals = {option.technology: option.objective for option in decision.ranking}
    by_tech = {e.technology: e for e in evaluations}
    reasons = {o.technology: o.message for o in infeasible}
    rows = []
    for tech in valid.spec.fabric.technologies:
        row = _empty_row(task, tech, seed, sim_seed, reasons.get(tech, ""))
        if tech in by_tech:
            row.update(_figures(by_tech[tech], task.size_bytes))
            row["score"] = totals[tech]
            row["recommended"] = tech == decision.technology
        rows.append(row)
    return rows


def evaluate_point(task: PointTask) -> PointResult:
    """The rows of one point; an error becomes the rows' ``error`` instead of an exception.

    Only the task decides the rows: no clock, no process state, so a point gives the same
    rows on any worker.
    """
    rows: list[dict[str, Any]] = []
    failed = False
    for seed, sim_seed in zip(task.seeds, task.sim_seeds, strict=True):
        try:
            rows += _seed_rows(task, seed, sim_seed)
        except FabricPlanError as exc:
            failed = True
            rows += _failed_rows(task, seed, sim_seed, str(exc))
        except Exception as exc:  # a model's bug must not stop the other points
            failed = True
            rows += _failed_rows(task, seed, sim_seed, f"{type(exc).__name__}: {exc}")
    return PointResult(index=task.index, key=task.key, rows=tuple(rows), failed=failed)


def _failed_rows(task: PointTask, seed: int, sim_seed: int, error: str) -> list[dict[str, Any]]:
    return [
        _empty_row(task, tech, seed, sim_seed, error)
        for tech in task.valid.spec.fabric.technologies
    ]


def lost_point(task: PointTask, error: str) -> PointResult:
    """The rows of a point whose worker died under it (twice): every row carries ``error``."""
    rows = [
        row
        for seed, sim_seed in zip(task.seeds, task.sim_seeds, strict=True)
        for row in _failed_rows(task, seed, sim_seed, error)
    ]
    return PointResult(index=task.index, key=task.key, rows=tuple(rows), failed=True)
