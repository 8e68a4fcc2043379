"""The training step with a simulator's collective times in it.

The step model (:mod:`.step`) composes the step from NCCL collectives timed analytically. When a
simulator (``--backend flow | packet``) has timed the same collectives on the designed fabric,
its times go into the step: for each collective the ratio ``simulated / analytic`` (the median
over the sizes both have of at least :data:`MIN_SIZE_BYTES`, the bandwidth regime in which a
step's gradient buckets and expert exchanges run) scales the exposed fabric communication of the
dimension it carries — ``all_to_all`` the expert-parallel time, ``all_reduce`` the rest of the
exposed fabric time (data-parallel buckets, pipeline sends). NVLink-only time is untouched. The
scaled part is taken as exposed as before (overlap is not recomputed).

>>> from fabricplan.model.results import CollectivePoint, StepTimeResult
>>> step = StepTimeResult(compute_s=1.0, comm_total_s=0.2, comm_exposed_s=0.2, step_s=1.2,
...     comm_by_dimension_s={"dp": 0.2}, exposed_fraction=0.2 / 1.2, gpu_hours_lost_per_year=0.0)
>>> def point(t: float) -> CollectivePoint:
...     return CollectivePoint(collective="all_reduce", size_bytes=2**30, algorithm="x",
...                            time_us=t, algbw_GBps=1.0, busbw_GBps=1.0)
>>> round(simulated_step(step, {"all_reduce": 1.5}).step_s, 6)  # 0.2 s x 1.5
1.3
>>> collective_ratios((point(150.0),), (point(100.0),))
{'all_reduce': 1.5}
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from fabricplan.model.results import CollectivePoint, PerformanceResult, StepTimeResult

MIN_SIZE_BYTES = 2**20
"""Smallest size whose ratio counts (below it a collective is latency-bound, and the step's
buckets are far larger)."""


def collective_ratios(
    simulated: Sequence[CollectivePoint], analytic: Sequence[CollectivePoint]
) -> dict[str, float]:
    """Median ``simulated / analytic`` time per collective over common sizes >= 1 MiB."""
    reference = {(p.collective, p.size_bytes): p.time_us for p in analytic}
    ratios: dict[str, list[float]] = {}
    for p in simulated:
        base = reference.get((p.collective, p.size_bytes))
        if base and p.size_bytes >= MIN_SIZE_BYTES:
            ratios.setdefault(p.collective, []).append(p.time_us / base)
    return {op: statistics.median(values) for op, values in ratios.items()}


def simulated_step(step: StepTimeResult, ratios: Mapping[str, float]) -> StepTimeResult:
    """``step`` with its exposed fabric communication scaled by the collectives' ratios."""
    fabric = step.comm_exposed_fabric_s
    ep = min(step.comm_by_dimension_s.get("ep", 0.0), fabric)
    rest = fabric - ep
    a2a, reduce = ratios.get("all_to_all", 1.0), ratios.get("all_reduce", 1.0)
    extra = (a2a - 1.0) * ep + (reduce - 1.0) * rest
    if extra == 0.0:
        return step
    exposed = max(0.0, step.comm_exposed_s + extra)
    total = step.compute_s + exposed
    per_exposed = (
        step.gpu_hours_lost_per_year / step.exposed_fraction if step.exposed_fraction else 0.0
    )
    note = (
        "step time uses the simulated collectives: "
        + ", ".join(f"{op} x{r:.3f}" for op, r in sorted(ratios.items()))
        + " of the analytic times (median over sizes >= 1 MiB) on the exposed fabric time"
    )
    return step.model_copy(
        update={
            "comm_exposed_s": exposed,
            "step_s": total,
            "exposed_fraction": exposed / total,
            "gpu_hours_lost_per_year": exposed / total * per_exposed,
            "assumptions": (*step.assumptions, note),
        }
    )


def with_simulated_collectives(
    performance: PerformanceResult, analytic: Sequence[CollectivePoint]
) -> PerformanceResult:
    """A simulator's result whose step uses its own collective times (see the module)."""
    if performance.step is None:
        return performance
    ratios = collective_ratios(performance.collectives, analytic)
    if not ratios:
        return performance
    step = simulated_step(performance.step, ratios)
    return performance.model_copy(
        update={
            "step": step,
            "notes": (
                *[
                    f"{performance.backend}: perftest tables and base latency are the analytic"
                    " model's"
                    if "training step are the analytic" in n
                    else n
                    for n in performance.notes
                ],
                f"{performance.backend}: {step.assumptions[-1]}",
            ),
        }
    )
