"""What a packet-level run returns: the arrays (:class:`PacketSimResult`) and their JSON
summary (:class:`PacketSimStats`), in the flow level's shape plus the packet-level extras:
events, pause frames or credit stalls, drops, retransmissions, queue depth over time and
stall time per port.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fabricplan.model.base import Frozen
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.spec import PacketSpec
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
from fabricplan.topology.graph import LINK_TIERS
from fabricplan.units import BITS_PER_BYTE, BYTES_PER_US_PER_GBYTE_PER_S

QUEUE_SERIES = 5
"""Deepest queues whose depth over time the summary lists."""
SERIES_POINTS = 200
"""Points kept per queue series in the summary (evenly thinned)."""

RunStatus = str
"""``done`` (every flow delivered and acknowledged), ``stalled`` (no progress for the stall
limit: deadlock or a receiver that never drains), ``end`` (end time reached), ``idle`` (nothing
left to happen but flows unfinished)."""


class QueueSeries(Frozen):
    link: str
    max_bytes: int
    bytes: tuple[float, ...]


class QueueDepthStats(Frozen):
    """Queue depth over time of the deepest queues (sampled every ``sample_us``)."""

    sample_us: float
    times_us: tuple[float, ...]
    series: tuple[QueueSeries, ...]
    max_bytes_by_tier: dict[str, int]


class PortStallStats(Frozen):
    link: str
    stall_us: float
    """Time the port had packets for a class it was not allowed to send (PFC pause or no IB
    credits)."""
    stalls: int
    pause_frames: int
    drops: int


class PacketSimStats(SimStats):
    """The JSON summary of a packet-level run (the flow level's fields plus the extras)."""

    backend: str = "packet"
    status: RunStatus
    events: int
    pauses: int
    """PFC pause frames sent (XOFF and refreshes), or credit-stall episodes under credits."""
    drops: int
    retransmits: int
    timeouts: int
    ecn_marks: int
    cnps: int
    watchdog_triggers: int
    stalled_ports: tuple[PortStallStats, ...]
    queue_depth: QueueDepthStats
    events_per_s: float


@dataclass(frozen=True, eq=False)
class PacketSimResult:
    """The arrays of one packet-level run (times in µs)."""

    network: PacketNetwork
    traffic: Traffic
    spec: PacketSpec
    seed: int
    status: RunStatus
    start_us: NDArray[np.float64]
    finish_us: NDArray[np.float64]
    """Last payload byte at the receiver (nan if never)."""
    acked_us: NDArray[np.float64]
    """Last ACK at the sender (nan if never)."""
    retransmits: NDArray[np.int64]
    timeouts: NDArray[np.int64]
    sent_packets: NDArray[np.int64]
    packets: NDArray[np.int64]
    ooo_discards: NDArray[np.int64]
    duplicates: NDArray[np.int64]
    step_start_us: NDArray[np.float64]
    step_finish_us: NDArray[np.float64]
    link_tx_bytes: NDArray[np.int64]
    link_stall_us: NDArray[np.float64]
    link_stalls: NDArray[np.int64]
    link_pause_frames: NDArray[np.int64]
    link_drops: NDArray[np.int64]
    link_max_queue_bytes: NDArray[np.int64]
    switch_max_bytes: NDArray[np.int64]
    switch_buffer_bytes: NDArray[np.int64]
    sample_us: NDArray[np.float64]
    queue_samples: NDArray[np.float32]
    """(samples, links) queue bytes."""
    counters: dict[str, int]
    end_us: float
    wall_s: float

    @property
    def completion_us(self) -> float:
        """When the last step finished (nan if a flow never finished)."""
        if np.isnan(self.finish_us).any():
            return float("nan")
        return float(self.step_finish_us.max(initial=0.0))

    @property
    def fct_us(self) -> NDArray[np.float64]:
        """Start to last byte at the receiver."""
        return self.finish_us - self.start_us

    @property
    def events(self) -> int:
        return self.counters["events"]

    def link_name(self, link: int) -> str:
        graph = self.network.graph
        if graph is not None:
            return graph.link_name(link)
        net = self.network
        return f"v{int(net.link_src[link])}->v{int(net.link_dst[link])}"

    def collective_times(self) -> dict[tuple[int, str], tuple[float, float]]:
        """(start, finish) of every (job, collective) in the traffic."""
        return collective_spans(self.traffic, self.step_start_us, self.step_finish_us)

    def utilisation(self) -> NDArray[np.float64]:
        """Wire bytes each link carried over its capacity for the whole run."""
        span = self.end_us
        cap = self.network.link_speed_gbps / BITS_PER_BYTE * BYTES_PER_US_PER_GBYTE_PER_S * span
        return np.divide(
            self.link_tx_bytes.astype(np.float64), cap, out=np.zeros(cap.size), where=cap > 0
        )

    def stats(self) -> PacketSimStats:
        """The JSON summary."""
        fct_stats = fct_summary(self.fct_us[np.isfinite(self.fct_us)])
        steps = step_summaries(self.traffic, self.step_start_us, self.step_finish_us)
        collectives = collective_summaries(self.traffic, self.collective_times())
        util = self.utilisation()
        tiers, max_by_tier = self._tiers(util)
        order = np.argsort(-util, kind="stable")[:BUSIEST_LINKS]
        busiest = tuple(
            LinkStats(
                link=int(i),
                name=self.link_name(int(i)),
                tier=self._tier_name(int(i)),
                utilisation=float(util[i]),
                bytes=float(self.link_tx_bytes[i]),
            )
            for i in order
            if self.link_tx_bytes[i] > 0
        )
        stall = self.link_stall_us
        worst = int(np.argmax(stall)) if stall.size else 0
        paused = PauseStats(
            links_paused=int((stall > 0).sum()),
            total_link_us=float(stall.sum()),
            max_link_us=float(stall.max(initial=0.0)),
            max_link=self.link_name(worst) if stall.size and stall[worst] > 0 else "",
        )
        ports = tuple(
            PortStallStats(
                link=self.link_name(int(i)),
                stall_us=float(stall[i]),
                stalls=int(self.link_stalls[i]),
                pause_frames=int(self.link_pause_frames[i]),
                drops=int(self.link_drops[i]),
            )
            for i in np.argsort(-stall, kind="stable")[:BUSIEST_LINKS]
            if stall[i] > 0 or self.link_drops[i] > 0
        )
        c = self.counters
        pauses = c["pause_frames"] if self.spec.link_flow_control != "credit" else c["stalls"]
        return PacketSimStats(
            technology=self.network.graph.technology if self.network.graph else self.network.name,
            routing=self.spec.routing,
            link_flow_control=self.spec.link_flow_control,
            congestion_control=self.spec.congestion_control,
            flows=self.traffic.flows,
            bytes=self.traffic.total_bytes,
            completion_us=self.completion_us if np.isfinite(self.completion_us) else -1.0,
            fct_us=fct_stats,
            steps=steps,
            collectives=collectives,
            tiers=tiers,
            busiest_links=busiest,
            paused=paused,
            status=self.status,
            events=c["events"],
            pauses=pauses,
            drops=c["drops"],
            retransmits=c["retransmits"],
            timeouts=c["timeouts"],
            ecn_marks=c["ecn_marks"],
            cnps=c["cnps"],
            watchdog_triggers=c["watchdog_triggers"],
            stalled_ports=ports,
            queue_depth=self._queue_depth(max_by_tier),
            wall_s=self.wall_s,
            events_per_s=c["events"] / self.wall_s if self.wall_s > 0 else 0.0,
            seed=self.seed,
        )

    def _tier_name(self, link: int) -> str:
        graph = self.network.graph
        if graph is None:
            src_host = self.network.link_src[link] < self.network.hosts
            dst_host = self.network.link_dst[link] < self.network.hosts
            return (
                "host_to_switch"
                if src_host
                else ("switch_to_host" if dst_host else "switch_to_switch")
            )
        return LINK_TIERS[int(graph.link_tier[link])]

    def _tiers(self, util: NDArray[np.float64]) -> tuple[tuple[TierStats, ...], dict[str, int]]:
        names = np.array([self._tier_name(i) for i in range(self.network.links)])
        tiers: list[TierStats] = []
        max_by_tier: dict[str, int] = {}
        for tier in dict.fromkeys(names.tolist()):
            mask = names == tier
            tiers.append(
                TierStats(
                    tier=tier,
                    links=int(mask.sum()),
                    mean_utilisation=float(util[mask].mean()),
                    max_utilisation=float(util[mask].max()),
                    paused_us=float(self.link_stall_us[mask].sum()),
                )
            )
            max_by_tier[tier] = int(self.link_max_queue_bytes[mask].max(initial=0))
        return tuple(tiers), max_by_tier

    def _queue_depth(self, max_by_tier: dict[str, int]) -> QueueDepthStats:
        deepest = [
            int(i)
            for i in np.argsort(-self.link_max_queue_bytes, kind="stable")[:QUEUE_SERIES]
            if self.link_max_queue_bytes[i] > 0
        ]
        n = self.sample_us.size
        keep = (
            np.unique(np.linspace(0, n - 1, min(n, SERIES_POINTS)).astype(np.int64))
            if n
            else np.zeros(0, dtype=np.int64)
        )
        period = float(self.spec.sample_us)
        return QueueDepthStats(
            sample_us=period,
            times_us=tuple(float(t) for t in self.sample_us[keep]),
            series=tuple(
                QueueSeries(
                    link=self.link_name(i),
                    max_bytes=int(self.link_max_queue_bytes[i]),
                    bytes=tuple(float(b) for b in self.queue_samples[keep, i]),
                )
                for i in deepest
            ),
            max_bytes_by_tier=max_by_tier,
        )
