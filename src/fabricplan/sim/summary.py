"""What both simulation levels report: the JSON summary's shared records and their builders.

A level's result keeps its own arrays; its ``stats()`` fills a :class:`SimStats` subclass from
them with the builders here, so a flow-level and a packet-level run of the same traffic print
the same fields in the same units.

>>> import numpy as np
>>> fct_summary(np.array([1.0, 2.0, 3.0])).p50
2.0
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.model.base import Frozen
from fabricplan.sim.traffic import Traffic

BUSIEST_LINKS = 10
"""Links listed in :attr:`FlowSimStats.busiest_links`."""


class FctStats(Frozen):
    """Flow completion times (µs): start of the flow to its last byte at the receiver."""

    p50: float
    p99: float
    max: float
    mean: float


class StepStats(Frozen):
    name: str
    collective: str
    job: int
    start_us: float
    finish_us: float


class CollectiveStats(Frozen):
    """One collective (or pattern) of the traffic: first step start to last step finish."""

    name: str
    job: int
    start_us: float
    finish_us: float
    time_us: float
    flows: int


class TierStats(Frozen):
    """Link utilisation of one tier (bytes carried / (capacity x completion time))."""

    tier: str
    links: int
    mean_utilisation: float
    max_utilisation: float
    paused_us: float
    """Link-microseconds this tier's links spent paused (PFC) or credit-stalled (IB)."""


class LinkStats(Frozen):
    link: int
    name: str
    tier: str
    utilisation: float
    bytes: float


class PauseStats(Frozen):
    """Estimated time links spent paused or credit-stalled by back-pressure."""

    links_paused: int
    total_link_us: float
    max_link_us: float
    max_link: str


class SimStats(Frozen):
    """What every simulator's JSON summary holds (the flow and packet levels add their own)."""

    backend: str
    technology: str
    routing: str
    link_flow_control: str
    congestion_control: str
    flows: int
    bytes: float
    completion_us: float
    fct_us: FctStats
    steps: tuple[StepStats, ...]
    collectives: tuple[CollectiveStats, ...]
    tiers: tuple[TierStats, ...]
    busiest_links: tuple[LinkStats, ...]
    paused: PauseStats
    wall_s: float
    seed: int


def fct_summary(fct_us: NDArray[np.float64]) -> FctStats:
    """p50, p99, max and mean of flow completion times (zeros when there are none)."""
    has = fct_us.size > 0
    return FctStats(
        p50=float(np.percentile(fct_us, 50)) if has else 0.0,
        p99=float(np.percentile(fct_us, 99)) if has else 0.0,
        max=float(fct_us.max()) if has else 0.0,
        mean=float(fct_us.mean()) if has else 0.0,
    )


def step_summaries(
    traffic: Traffic, start_us: NDArray[np.float64], finish_us: NDArray[np.float64]
) -> tuple[StepStats, ...]:
    """One record per traffic step, with its start and finish."""
    return tuple(
        StepStats(
            name=s.name,
            collective=s.collective,
            job=s.job,
            start_us=float(start_us[i]),
            finish_us=float(finish_us[i]),
        )
        for i, s in enumerate(traffic.steps)
    )


def collective_spans(
    traffic: Traffic, start_us: NDArray[np.float64], finish_us: NDArray[np.float64]
) -> dict[tuple[int, str], tuple[float, float]]:
    """(first start, last finish) of every (job, collective) over its steps."""
    out: dict[tuple[int, str], tuple[float, float]] = {}
    for i, step in enumerate(traffic.steps):
        key = (step.job, step.collective)
        start, finish = float(start_us[i]), float(finish_us[i])
        if key in out:
            start, finish = min(start, out[key][0]), max(finish, out[key][1])
        out[key] = (start, finish)
    return out


def collective_summaries(
    traffic: Traffic, times_us: dict[tuple[int, str], tuple[float, float]]
) -> tuple[CollectiveStats, ...]:
    """One record per (job, collective): its span and the flows its steps carried."""
    per_step = np.bincount(traffic.step, minlength=len(traffic.steps))
    counts: dict[tuple[int, str], int] = {}
    for i, s in enumerate(traffic.steps):
        key = (s.job, s.collective)
        counts[key] = counts.get(key, 0) + int(per_step[i])
    return tuple(
        CollectiveStats(
            name=name,
            job=job,
            start_us=start,
            finish_us=finish,
            time_us=finish - start,
            flows=counts[(job, name)],
        )
        for (job, name), (start, finish) in times_us.items()
    )
