"""What a flow-level run returns: per-flow and per-link arrays, and their JSON summary.

:class:`FlowSimResult` keeps the arrays (per-flow start and finish, per-link bytes and paused
time); :meth:`FlowSimResult.stats` condenses them into a :class:`FlowSimStats`, the shape the
``simulate`` command prints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.flow.transport import TransportSpec
from fabricplan.sim.summary import (
    BUSIEST_LINKS,
    LinkStats,
    PauseStats,
    SimStats,
    TierStats,
    collective_spans,
    collective_summaries,
    fct_summary,
    step_summaries,
)
from fabricplan.sim.traffic import Traffic
from fabricplan.topology.graph import LINK_TIERS, FabricGraph


class FlowSimStats(SimStats):
    """The JSON summary of a flow-level run."""

    backend: str = "flow"
    epochs: int
    """Rate solves (completion batches)."""


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
