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
from fabricplan.sim.packet.engine import HEAP_NOW
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.spec import PacketSpec
from fabricplan.sim.packet.state import (
    C_CNPS,
    C_CORRUPTED,
    C_DELIVERED_BYTES,
    C_DROPS,
    C_ECN_MARKS,
    C_EVENTS,
    C_FLOWLETS,
    C_LLR_REPLAYS,
    C_LOSSLESS_DROPS,
    C_PAUSES,
    C_REASSEMBLY_HELD,
    C_RETX,
    C_SAMPLES,
    C_STALLS,
    C_TIMEOUTS,
    C_TRIMS,
    C_VOQ_PACKETS,
    C_VOQ_WAIT_PS,
    C_WD_TRIGGERS,
    F_ACKED_PS,
    F_DUPS,
    F_FINISH_PS,
    F_OOO,
    F_PACKETS,
    F_RETX,
    F_SENT,
    F_START_PS,
    F_TIMEOUTS,
    F_TRIMS,
    L_CORRUPTED,
    L_DROPS,
    L_MAX_Q,
    L_PAUSE_FRAMES,
    L_STALL_EVENTS,
    L_STALL_PS,
    L_STALL_SINCE,
    L_TRIMS,
    L_TX_BYTES,
    S_BUFFER,
    S_MAX_USED,
    ST_FINISH_PS,
    ST_START_PS,
    SimState,
)
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
from fabricplan.units import BITS_PER_BYTE, BYTES_PER_US_PER_GBYTE_PER_S, PS_PER_US

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
    trims: int = 0
    """Data packets a switch cut to their header instead of dropping (packet trimming)."""
    delivery: str = ""
    """What the receiving NICs accepted: in_order, nic_reorder or out_of_order."""
    voq_wait_us: float = 0.0
    """Scheduled fabric: mean time a data packet waited in its ingress VOQ for its grant."""
    stalled_ports: tuple[PortStallStats, ...]
    queue_depth: QueueDepthStats
    events_per_s: float


def _us(values_ps: NDArray[np.int64]) -> NDArray[np.float64]:
    out = values_ps.astype(np.float64) / PS_PER_US
    out[values_ps < 0] = np.nan
    return out


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
    trims: NDArray[np.int64]
    """Trimmed headers of each flow its receiver got (each answered by a NACK)."""
    step_start_us: NDArray[np.float64]
    step_finish_us: NDArray[np.float64]
    link_tx_bytes: NDArray[np.int64]
    link_stall_us: NDArray[np.float64]
    link_stalls: NDArray[np.int64]
    link_pause_frames: NDArray[np.int64]
    link_drops: NDArray[np.int64]
    link_trims: NDArray[np.int64]
    link_corrupted: NDArray[np.int64]
    """Data frames that arrived corrupted on each link (dropped, or replayed under LLR)."""
    link_max_queue_bytes: NDArray[np.int64]
    switch_max_bytes: NDArray[np.int64]
    switch_buffer_bytes: NDArray[np.int64]
    sample_us: NDArray[np.float64]
    queue_samples: NDArray[np.float32]
    """(samples, probed links) queue bytes."""
    probe_links: NDArray[np.int64]
    """The link of each column of ``queue_samples`` (the spec's probes)."""
    counters: dict[str, int]
    end_us: float
    wall_s: float

    @classmethod
    def from_state(
        cls,
        network: PacketNetwork,
        traffic: Traffic,
        spec: PacketSpec,
        seed: int,
        s: SimState,
        status: RunStatus,
        wall_s: float,
    ) -> PacketSimResult:
        """The result of a finished run, read from its state tables (times to µs)."""
        now = int(s.hmeta[HEAP_NOW])
        li = s.li
        stall = li[:, L_STALL_PS].copy()
        open_stall = li[:, L_STALL_SINCE] >= 0
        stall[open_stall] += now - li[open_stall, L_STALL_SINCE]
        c = s.cnt
        k = int(c[C_SAMPLES])
        counters = {
            "events": int(c[C_EVENTS]),
            "drops": int(c[C_DROPS]),
            "retransmits": int(c[C_RETX]),
            "pause_frames": int(c[C_PAUSES]),
            "timeouts": int(c[C_TIMEOUTS]),
            "stalls": int(c[C_STALLS]),
            "watchdog_triggers": int(c[C_WD_TRIGGERS]),
            "cnps": int(c[C_CNPS]),
            "ecn_marks": int(c[C_ECN_MARKS]),
            "lossless_drops": int(c[C_LOSSLESS_DROPS]),
            "delivered_bytes": int(c[C_DELIVERED_BYTES]),
            "trims": int(c[C_TRIMS]),
            "voq_packets": int(c[C_VOQ_PACKETS]),
            "voq_wait_ps": int(c[C_VOQ_WAIT_PS]),
            "corrupted_frames": int(c[C_CORRUPTED]),
            "llr_replays": int(c[C_LLR_REPLAYS]),
            "flowlets": int(c[C_FLOWLETS]),
            "reassembly_held": int(c[C_REASSEMBLY_HELD]),
        }
        fi = s.fi
        return cls(
            network=network,
            traffic=traffic,
            spec=spec,
            seed=seed,
            status=status,
            start_us=_us(fi[:, F_START_PS]),
            finish_us=_us(fi[:, F_FINISH_PS]),
            acked_us=_us(fi[:, F_ACKED_PS]),
            retransmits=fi[:, F_RETX].copy(),
            timeouts=fi[:, F_TIMEOUTS].copy(),
            sent_packets=fi[:, F_SENT].copy(),
            packets=fi[:, F_PACKETS].copy(),
            ooo_discards=fi[:, F_OOO].copy(),
            duplicates=fi[:, F_DUPS].copy(),
            trims=fi[:, F_TRIMS].copy(),
            step_start_us=_us(s.st[:, ST_START_PS]),
            step_finish_us=_us(s.st[:, ST_FINISH_PS]),
            link_tx_bytes=li[:, L_TX_BYTES].copy(),
            link_stall_us=stall / PS_PER_US,
            link_stalls=li[:, L_STALL_EVENTS].copy(),
            link_pause_frames=li[:, L_PAUSE_FRAMES].copy(),
            link_drops=li[:, L_DROPS].copy(),
            link_trims=li[:, L_TRIMS].copy(),
            link_corrupted=li[:, L_CORRUPTED].copy(),
            link_max_queue_bytes=li[:, L_MAX_Q].copy(),
            switch_max_bytes=s.si[:, S_MAX_USED].copy(),
            switch_buffer_bytes=s.si[:, S_BUFFER].copy(),
            sample_us=s.sample_ps[:k] / PS_PER_US,
            queue_samples=s.samples[:k].copy(),
            probe_links=s.probe_links.copy(),
            counters=counters,
            end_us=now / PS_PER_US,
            wall_s=wall_s,
        )

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
            trims=c["trims"],
            delivery=self.spec.receiver,
            voq_wait_us=(
                c["voq_wait_ps"] / c["voq_packets"] / PS_PER_US if c["voq_packets"] else 0.0
            ),
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
        column = {int(link): c for c, link in enumerate(self.probe_links)}
        probed = np.asarray(sorted(column), dtype=np.int64)
        depth = self.link_max_queue_bytes[probed]
        deepest = [
            int(probed[i]) for i in np.argsort(-depth, kind="stable")[:QUEUE_SERIES] if depth[i] > 0
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
                    bytes=tuple(float(b) for b in self.queue_samples[keep, column[i]]),
                )
                for i in deepest
            ),
            max_bytes_by_tier=max_by_tier,
        )
