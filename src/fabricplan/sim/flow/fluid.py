"""The flow-level simulation: fluid rates between flow events, on every link of the fabric.

Between two events every active flow sends at a constant rate, found by
:func:`~fabricplan.sim.flow.solver.maxmin_rates` on the resources of the routing in use (links
for pinned routing, trunks for adaptive routing and spraying). Events are flow arrivals (a step
starting, a background flow arriving), flow completions, and the moment congestion control has
settled after new flows started. Fabrics with hop-by-hop back-pressure (credits or PFC) apply
head-of-line blocking while congestion control has not yet settled, and always without
congestion control. A scheduled fabric (VOQ) never back-pressures: each egress port shares its
capacity among the flows to it, and a flow's first byte waits for its grant. A lossy fabric
whose queue overflows before congestion control has settled costs every flow through that
queue one recovery: a round trip when the switches trim, the retransmission timeout when they
drop.

Completions are batched to keep large runs fast: an epoch ends at the first completion plus
``tolerance`` times the time since the last arrival; every flow due before then finishes at its
own time, and the capacity it frees is handed out at the epoch's end. ``tolerance=0`` handles
every completion exactly.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> from fabricplan.sim.traffic import GpuLayout, incast
>>> from fabricplan.sim.flow.transport import transport_for
>>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
>>> graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
>>> transport = transport_for(valid.technologies["roce_v2"], valid.switches["roce_v2"])
>>> result = simulate(graph, incast(GpuLayout(64, 8, 8), 4, 1e8), transport)
>>> bound_us = 4 * 1e8 / (50_000 * transport.payload_share)   # N S / B
>>> bool(result.completion_us >= bound_us), round(result.completion_us / bound_us, 3)
(True, 1.0)
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.sim.flow.adaptive import TrunkBalance
from fabricplan.sim.flow.result import FlowSimResult
from fabricplan.sim.flow.routing import (
    bytes_per_us,
    flow_paths,
    link_payload_share,
    resources_for,
)
from fabricplan.sim.flow.solver import add_along_paths, maxmin_rates
from fabricplan.sim.flow.transport import (
    LOSS_TIMEOUT_US,
    TRIM_RECOVERY_ROUND_TRIPS,
    TransportSpec,
    request_grant_us,
    settle_time_us,
)
from fabricplan.sim.path import base_rtt_ns
from fabricplan.sim.run_options import DEFAULT_TOLERANCE
from fabricplan.sim.traffic import Traffic
from fabricplan.topology.graph import FabricGraph
from fabricplan.topology.routing import path_latency_ns
from fabricplan.units import ns_to_us

Progress = Callable[[float], None]
"""Called after every epoch with the share of bytes delivered so far."""


class _Releases:
    """Flows waiting for their arrival: one sorted run per started step, merged by a heap."""

    def __init__(self, traffic: Traffic) -> None:
        order = np.lexsort((traffic.offset_us, traffic.step))
        self.flows = order.astype(np.int64)
        counts = np.bincount(traffic.step, minlength=len(traffic.steps))
        self.first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.offset = traffic.offset_us[order]
        self.cursor = self.first[:-1].copy()
        self.start = np.full(len(traffic.steps), math.nan)
        self.heap: list[tuple[float, int]] = []

    def start_step(self, step: int, at_us: float) -> None:
        self.start[step] = at_us
        if self.cursor[step] < self.first[step + 1]:
            heapq.heappush(self.heap, (at_us + self.offset[self.cursor[step]], step))

    def next_us(self) -> float:
        return self.heap[0][0] if self.heap else math.inf

    def due(self, now_us: float) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Flows arriving by ``now_us`` and their arrival times."""
        ids: list[NDArray[np.int64]] = []
        times: list[NDArray[np.float64]] = []
        while self.heap and self.heap[0][0] <= now_us:
            _, step = heapq.heappop(self.heap)
            lo, hi = self.cursor[step], self.first[step + 1]
            arrive = self.start[step] + self.offset[lo:hi]
            end = lo + int(np.searchsorted(arrive, now_us, side="right"))
            ids.append(self.flows[lo:end])
            times.append(arrive[: end - lo])
            self.cursor[step] = end
            if end < hi:
                heapq.heappush(self.heap, (self.start[step] + self.offset[end], step))
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return np.concatenate(ids), np.concatenate(times)


def simulate(
    graph: FabricGraph,
    traffic: Traffic,
    transport: TransportSpec,
    seed: int = 0,
    tolerance: float = DEFAULT_TOLERANCE,
    progress: Progress | None = None,
) -> FlowSimResult:
    """Run ``traffic`` on ``graph`` with ``transport`` and return the per-flow and per-link
    record.

    Parameters
    ----------
    graph
        The fabric (failed links and switches already applied).
    traffic
        Flows in steps (:mod:`fabricplan.sim.traffic`).
    transport
        Routing, flow control, congestion control and payload share.
    seed
        Seeds everything random in routing (ECMP source ports and switch hash seeds).
    tolerance
        Completion batching (0 = exact).
    progress
        Called with the share of bytes delivered after every epoch.

    Returns
    -------
    FlowSimResult
        Every flow's start, finish and path latency, every link's bytes and paused time, the
        steps' times, and the run's epochs and wall time.

    Raises
    ------
    ModelError
        FP531/FP532 when a flow has no path; FP534 when a flow can make no progress.

    Examples
    --------
    >>> from fabricplan.sim.flow.transport import TransportSpec
    >>> from fabricplan.sim.traffic import GpuLayout, incast
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 32, "gpus_per_node": 1, "nics_per_node": 1},
    ...     "fabric": {"technologies": ["roce_v2"]}})
    >>> graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> traffic = incast(GpuLayout(32, 1, 1), 4, 1e6)      # 4 senders, 1 MB each, to GPU 0
    >>> result = simulate(graph, traffic, TransportSpec("ecmp", "pfc", "none", 1.0))
    >>> wire_us = 4 * 1e6 / (valid.spec.cluster.nic_speed_gbps * 1e3 / 8)   # N S / B
    >>> bool(result.completion_us >= wire_us)
    True
    """
    wall0 = time.perf_counter()
    n = traffic.flows
    hops = graph.max_hops
    resources = resources_for(
        graph, transport.routing, transport.payload_share, 1.0, transport.fabric_payload_share
    )
    ideal_cap = resources.capacity_bytes_per_us
    cap = ideal_cap
    balance = (
        TrunkBalance(graph, transport.adaptive_recovery, seed, n)
        if transport.routing == "adaptive" and transport.adaptive_recovery < 1.0
        else None
    )
    counts_losses = not transport.lossless and transport.loss_recovery != "ideal"
    buffer_bytes = np.bincount(resources.of_link, minlength=resources.count).astype(
        np.float64
    ) * float(transport.port_buffer_bytes)
    recovery_us = np.zeros(n)
    res_paths = np.full((n, hops), -1, dtype=np.int32)
    latency_us = np.zeros(n)
    remaining = traffic.size_bytes.astype(np.float64).copy()
    start_us = np.full(n, math.nan)
    finish_us = np.full(n, math.nan)
    res_bytes = np.zeros(resources.count)
    res_paused_us = np.zeros(resources.count)

    steps = traffic.steps
    n_steps = len(steps)
    waiting_deps = np.array([len(s.deps) for s in steps], dtype=np.int64)
    dependents: list[list[int]] = [[] for _ in steps]
    for i, s in enumerate(steps):
        for d in s.deps:
            dependents[d].append(i)
    outstanding = np.bincount(traffic.step, minlength=n_steps).astype(np.int64)
    step_finish = np.full(n_steps, math.nan)
    step_last = np.zeros(n_steps)
    releases = _Releases(traffic)
    total_bytes = max(traffic.total_bytes, 1.0)

    def start_step(step: int, at_us: float) -> None:
        releases.start_step(step, at_us)
        if outstanding[step] == 0:
            finish_step(step, at_us)

    def finish_step(step: int, at_us: float) -> None:
        step_finish[step] = at_us
        for nxt in dependents[step]:
            waiting_deps[nxt] -= 1
            if waiting_deps[nxt] == 0:
                ready = max(step_finish[d] for d in steps[nxt].deps)
                start_step(nxt, ready + steps[nxt].delay_us)

    for i, s in enumerate(steps):
        if not s.deps:
            start_step(i, s.delay_us)

    active = np.zeros(0, dtype=np.int64)
    now = 0.0
    since = 0.0
    hol_until = -math.inf
    epochs = 0
    while True:
        new, arrive = releases.due(now)
        if new.size:
            res_new, link_new = flow_paths(
                graph, transport.routing, traffic.src[new], traffic.dst[new], new, seed
            )
            res_paths[new] = res_new
            if balance is not None:
                balance.add(new, traffic.src[new], traffic.dst[new])
                cap = ideal_cap * balance.usable_share()
            latency_us[new] = path_latency_ns(graph, link_new) * ns_to_us(1.0)
            if transport.scheduled:  # the first cell waits for its grant
                latency_us[new] += request_grant_us(
                    graph.link_latency_ns,
                    graph.link_tier,
                    graph.leaf_latency_ns,
                    link_new,
                    graph.spine_extra_latency_ns,
                )
            start_us[new] = arrive
            empty = remaining[new] <= 0
            if empty.any():
                _complete(
                    new[empty],
                    arrive[empty] + latency_us[new[empty]],
                    traffic,
                    finish_us,
                    outstanding,
                    step_last,
                    finish_step,
                )
            active = np.concatenate([active, new[~empty]])
            rtt_us = unloaded_round_trip_us(graph, link_new)
            if transport.back_pressure:
                overload = float(_offered_over_capacity(res_paths, active, cap).max(initial=0.0))
                hol_until = max(
                    hol_until, now + settle_time_us(transport.congestion_control, overload, rtt_us)
                )
            elif counts_losses:
                lost = _overflowing_flows(res_paths, active, cap, buffer_bytes, transport, rtt_us)
                if transport.loss_recovery == "trim_nack":
                    penalty = 2.0 * TRIM_RECOVERY_ROUND_TRIPS * latency_us[lost]
                else:
                    penalty = np.full(lost.size, LOSS_TIMEOUT_US)
                recovery_us[lost] = np.maximum(recovery_us[lost], penalty)
            since = now
        if active.size == 0:
            now = releases.next_us()
            if math.isinf(now):
                break
            continue
        hol = transport.back_pressure and now < hol_until
        if balance is not None:
            cap = ideal_cap * balance.usable_share()
        rates, paused = maxmin_rates(res_paths, active, cap, hol)
        if not (rates > 0).all():
            stuck = int(active[np.argmin(rates)])
            raise ModelError(
                "FP534",
                "flow simulation",
                "a flow crosses a link with no capacity left",
                (int(traffic.src[stuck]), int(traffic.dst[stuck])),
                "check the failed links and switches",
            )
        left = remaining[active]
        done_at = now + left / rates
        first = float(done_at.min())
        end = max(first, first + tolerance * (first - since))
        end = min(end, releases.next_us(), hol_until if hol else math.inf)
        done = done_at <= end + 1e-9 * max(end, 1.0)
        span = np.where(done, done_at - now, end - now)
        sent = rates * span
        remaining[active] = np.where(done, 0.0, np.maximum(left - sent, 0.0))
        add_along_paths(res_paths, active, sent, res_bytes)
        if hol and paused.any():
            load = np.zeros(resources.count)
            add_along_paths(res_paths, active, rates, load)
            idle = np.clip(
                1.0 - np.divide(load, cap, out=np.ones_like(load), where=cap > 0), 0.0, 1.0
            )
            res_paused_us += np.where(paused, idle * (end - now), 0.0)
        finished = active[done]
        if balance is not None:
            balance.remove(finished)
        _complete(
            finished,
            done_at[done] + latency_us[finished] + recovery_us[finished],
            traffic,
            finish_us,
            outstanding,
            step_last,
            finish_step,
        )
        active = active[~done]
        now = max(end, now)
        epochs += 1
        if progress is not None:
            progress(1.0 - float(remaining.sum()) / total_bytes)

    link_cap = bytes_per_us(np.where(graph.link_alive, graph.link_speed_gbps, 0.0))
    return FlowSimResult(
        graph=graph,
        traffic=traffic,
        transport=transport,
        seed=seed,
        start_us=start_us,
        finish_us=finish_us,
        latency_us=latency_us,
        link_bytes=res_bytes[resources.of_link] * resources.link_share,
        link_paused_us=res_paused_us[resources.of_link],
        link_capacity_bytes_per_us=link_cap
        * link_payload_share(graph, transport.payload_share, transport.fabric_payload_share),
        step_start_us=releases.start.copy(),
        step_finish_us=step_finish,
        epochs=epochs,
        wall_s=time.perf_counter() - wall0,
    )


def unloaded_round_trip_us(graph: FabricGraph, link_paths: NDArray[np.int32]) -> float:
    """Largest unloaded round trip of flows on ``link_paths``: the shared floor's base RTT
    (:func:`fabricplan.sim.path.base_rtt_ns`, the one the packet level's window starts from)
    out on each path and back on its cables' other halves, with no packet serialised (the
    fluid model has none), plus both NICs each way.

    Parameters
    ----------
    graph
        The designed fabric (link latencies and speeds, the NIC latency).
    link_paths
        ``(flows, hops)`` link ids, -1 past the last hop.

    Returns
    -------
    float
        Microseconds (the NICs only, without flows).

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> from fabricplan.topology.routing import path_latency_ns, route
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> paths = route(g, np.array([0, 0]), np.array([1, 9]), "dmodk")
    >>> one_way_us = path_latency_ns(g, paths).max() / 1000   # links and both NICs
    >>> bool(np.isclose(unloaded_round_trip_us(g, paths), 2 * one_way_us))
    True
    """
    forward = np.asarray(link_paths, dtype=np.int64)
    back = np.where(forward >= 0, graph.link_reverse[np.maximum(forward, 0)], -1)
    links_ns = base_rtt_ns(graph.link_latency_ns, graph.link_speed_gbps, forward, back, 0, 0)
    return ns_to_us(links_ns + 4 * graph.nic_latency_ns)


def _offered_over_capacity(
    paths: NDArray[np.int32], active: NDArray[np.int64], cap: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Offered load / capacity of every resource when every sender shares its NIC's line rate
    evenly over its active flows (what senders offer before congestion control reacts)."""
    first = paths[active, 0].astype(np.int64)
    per_nic = np.bincount(first, minlength=cap.size)
    offered = np.zeros(cap.size)
    add_along_paths(paths, active, cap[first] / per_nic[first], offered)
    return np.divide(offered, cap, out=np.zeros_like(offered), where=cap > 0)


def _overflowing_flows(
    paths: NDArray[np.int32],
    active: NDArray[np.int64],
    cap: NDArray[np.float64],
    buffer_bytes: NDArray[np.float64],
    transport: TransportSpec,
    rtt_us: float,
) -> NDArray[np.int64]:
    """Active flows through a queue that overflows before congestion control has settled: the
    excess ``(offered - capacity) x settling time`` is more than the queue's buffer."""
    ratio = _offered_over_capacity(paths, active, cap)
    over = np.flatnonzero(ratio > 1.0)
    overflow = np.zeros(cap.size, dtype=np.bool_)
    for r in over:
        settle = settle_time_us(transport.congestion_control, float(ratio[r]), rtt_us)
        excess = (ratio[r] - 1.0) * cap[r] * settle
        overflow[r] = excess > buffer_bytes[r]
    if not overflow.any():
        return np.zeros(0, dtype=np.int64)
    hops = paths[active]
    crossed = np.where(hops >= 0, overflow[np.maximum(hops, 0)], False).any(axis=1)
    return active[crossed]


def _complete(
    flows: NDArray[np.int64],
    at_us: NDArray[np.float64],
    traffic: Traffic,
    finish_us: NDArray[np.float64],
    outstanding: NDArray[np.int64],
    step_last: NDArray[np.float64],
    finish_step: Callable[[int, float], None],
) -> None:
    if flows.size == 0:
        return
    finish_us[flows] = at_us
    step_of = traffic.step[flows]
    np.maximum.at(step_last, step_of, at_us)
    np.subtract.at(outstanding, step_of, 1)
    for step in np.unique(step_of):
        if outstanding[step] == 0:
            finish_step(int(step), float(step_last[step]))
