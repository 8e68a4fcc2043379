"""What a flow-level run returns: per-flow and per-link arrays, and their JSON summary.

:class:`FlowSimResult` keeps the arrays (per-flow start and finish, per-link bytes and paused
time); :meth:`FlowSimResult.stats` condenses them into a :class:`FlowSimStats`, the shape the
``simulate`` command prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fabricplan.model.base import Frozen
from fabricplan.sim.flow.traffic import Traffic
from fabricplan.sim.flow.transport import TransportSpec
from fabricplan.topology.graph import LINK_TIERS, FabricGraph

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


class FlowSimStats(SimStats):
    """The JSON summary of a flow-level run."""

    backend: str = "flow"
    epochs: int
    """Rate solves (completion batches)."""


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


@dataclass(frozen=True, eq=False)
class FlowSimResult:
    """The arrays of one flow-level run."""

    graph: FabricGraph
    traffic: Traffic
    transport: TransportSpec
    seed: int
    start_us: NDArray[np.float64]
    finish_us: NDArray[np.float64]
    """Last byte delivered (fluid finish plus the path's one-way latency)."""
    latency_us: NDArray[np.float64]
    """One-way latency of each flow's path (NICs, switches, cables)."""
    link_bytes: NDArray[np.float64]
    link_paused_us: NDArray[np.float64]
    link_capacity_bytes_per_us: NDArray[np.float64]
    step_start_us: NDArray[np.float64]
    step_finish_us: NDArray[np.float64]
    epochs: int
    wall_s: float

    @property
    def completion_us(self) -> float:
        """When the last flow finished (0 without flows)."""
        return float(self.step_finish_us.max(initial=0.0))

    @property
    def transfer_us(self) -> float:
        """When the last byte left the fluid model, latency not counted (0 without flows)."""
        if self.finish_us.size == 0:
            return 0.0
        return float(np.max(self.finish_us - self.latency_us))

    @property
    def fct_us(self) -> NDArray[np.float64]:
        return self.finish_us - self.start_us

    def collective_times(self) -> dict[tuple[int, str], tuple[float, float]]:
        """(start, finish) of every (job, collective) in the traffic."""
        return collective_spans(self.traffic, self.step_start_us, self.step_finish_us)

    def utilisation(self) -> NDArray[np.float64]:
        """Payload bytes each link carried over its payload capacity for the whole run."""
        span = self.completion_us
        denom = self.link_capacity_bytes_per_us * span
        return np.divide(
            self.link_bytes, denom, out=np.zeros_like(self.link_bytes), where=denom > 0
        )

    def stats(self) -> FlowSimStats:
        """The JSON summary."""
        fct_stats = fct_summary(self.fct_us)
        steps = step_summaries(self.traffic, self.step_start_us, self.step_finish_us)
        collectives = collective_summaries(self.traffic, self.collective_times())
        util = self.utilisation()
        graph = self.graph
        tiers = []
        for tier_id, tier in enumerate(LINK_TIERS):
            mask = graph.link_tier == tier_id
            if not mask.any():
                continue
            tiers.append(
                TierStats(
                    tier=tier,
                    links=int(mask.sum()),
                    mean_utilisation=float(util[mask].mean()),
                    max_utilisation=float(util[mask].max()),
                    paused_us=float(self.link_paused_us[mask].sum()),
                )
            )
        order = np.argsort(-util, kind="stable")[:BUSIEST_LINKS]
        busiest = tuple(
            LinkStats(
                link=int(i),
                name=graph.link_name(int(i)),
                tier=LINK_TIERS[int(graph.link_tier[i])],
                utilisation=float(util[i]),
                bytes=float(self.link_bytes[i]),
            )
            for i in order
            if self.link_bytes[i] > 0
        )
        paused = self.link_paused_us
        worst = int(np.argmax(paused)) if paused.size else 0
        pause = PauseStats(
            links_paused=int((paused > 0).sum()),
            total_link_us=float(paused.sum()),
            max_link_us=float(paused.max(initial=0.0)),
            max_link=graph.link_name(worst) if paused.size and paused[worst] > 0 else "",
        )
        return FlowSimStats(
            technology=graph.technology,
            routing=self.transport.routing,
            link_flow_control=self.transport.link_flow_control,
            congestion_control=self.transport.congestion_control,
            flows=self.traffic.flows,
            bytes=self.traffic.total_bytes,
            completion_us=self.completion_us,
            fct_us=fct_stats,
            steps=steps,
            collectives=collectives,
            tiers=tuple(tiers),
            busiest_links=busiest,
            paused=pause,
            epochs=self.epochs,
            wall_s=self.wall_s,
            seed=self.seed,
        )
