"""Event-loop designs for the packet simulator, measured side by side.

1. *Python heapq + callbacks*: :class:`CallbackEngine` below, the readable reference (a heap
   of ``(time, priority, seq, callback)``), kept here as the baseline.
2. *numba heap over a numpy table*: :func:`~fabricplan.sim.packet.engine.heap_push` /
   :func:`~fabricplan.sim.packet.engine.heap_pop` in a compiled dispatch loop, the design the
   simulator uses.

Both run the same synthetic workload (tokens hopping between links, each hop one event
scheduled one link delay plus a pseudo-random queueing time ahead, the pending-event count of a
busy fabric), then the whole packet simulator runs a k = 8 fat-tree permutation to give the
events per second with the networking inside.

    .venv/bin/python benchmarks/packet_engine.py
"""

from __future__ import annotations

import heapq
import platform
import sys
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.compiled import drop_stale_cache, jit
from fabricplan.sim.packet.engine import EV_A, EV_TIME, event_heap, heap_pop, heap_push
from fabricplan.sim.packet.network import network_from_graph
from fabricplan.sim.packet.simulation import build_state, run_state
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.traffic import GpuLayout, permutation
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.topology.graph import fabric_graph

TOKENS = 25_000
"""Pending events (about what the k=16 yardstick keeps in its heap)."""
LINKS = 6_144
DELAY_PS = 1_000_000
JITTER_PS = 400_000
LCG_A, LCG_C, LCG_M = 6364136223846793005, 1442695040888963407, 2**64


class CallbackEngine:
    """The readable reference: a heap of ``(time_ps, priority, seq, callback)``; ties by
    priority, then scheduling order."""

    def __init__(self) -> None:
        self.now_ps = 0
        self._seq = 0
        self._heap: list[tuple[int, int, int, Callable[[], None]]] = []

    def schedule(self, at_ps: int, callback: Callable[[], None], priority: int = 0) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at_ps, priority, self._seq, callback))

    def run(self) -> int:
        handled = 0
        while self._heap:
            at_ps, _, _, callback = heapq.heappop(self._heap)
            self.now_ps = at_ps
            callback()
            handled += 1
        return handled


def python_heapq(events: int) -> float:
    """Events per second of the reference engine on the token workload."""
    engine = CallbackEngine()
    state = {"x": 1, "left": events}

    def hop(link: int) -> Callable[[], None]:
        def arrive() -> None:
            if state["left"] <= 0:
                return
            state["left"] -= 1
            state["x"] = (state["x"] * LCG_A + LCG_C) % LCG_M
            nxt = state["x"] % LINKS
            engine.schedule(engine.now_ps + DELAY_PS + state["x"] % JITTER_PS, hop(nxt))

        return arrive

    for token in range(TOKENS):
        engine.schedule(token, hop(token % LINKS))
    start = time.perf_counter()
    handled = engine.run()
    return handled / (time.perf_counter() - start)


@jit
def _token_loop(
    rows: NDArray[np.int64], meta: NDArray[np.int64], events: int, counts: NDArray[np.int64]
) -> int:
    x = np.uint64(1)
    handled = 0
    while meta[0] > 0 and handled < events:
        slot = heap_pop(rows, meta)
        link = rows[slot, EV_A]
        counts[link] += 1
        x = x * np.uint64(LCG_A) + np.uint64(LCG_C)
        nxt = np.int64(x % np.uint64(LINKS))
        at = rows[slot, EV_TIME] + DELAY_PS + np.int64(x % np.uint64(JITTER_PS))
        heap_push(rows, meta, at, 1, 1, int(nxt), 0, 0)
        handled += 1
    return handled


def numba_heap(events: int) -> float:
    """Events per second of the compiled heap on the same workload."""

    def setup() -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        rows, meta = event_heap(TOKENS + 1)
        for token in range(TOKENS):
            heap_push(rows, meta, token, 1, 1, token % LINKS, 0, 0)
        return rows, meta, np.zeros(LINKS, dtype=np.int64)

    rows, meta, counts = setup()
    _token_loop(rows, meta, 10, counts)  # compile (or load from the cache)
    rows, meta, counts = setup()
    start = time.perf_counter()
    handled = _token_loop(rows, meta, events, counts)
    return handled / (time.perf_counter() - start)


def simulator_rate() -> tuple[int, float, float]:
    """(events, wall s of the loop, events per second) of the full simulator on a k=8 fat tree
    permutation (128 hosts, 100G, 4 MB each, HPCC, ECMP, PFC)."""
    valid = parse_spec(
        {
            "cluster": {
                "gpus": 128,
                "gpus_per_node": 1,
                "nics_per_node": 1,
                "nic_speed_gbps": 100,
                "nic": {"speed_gbps": 100},
            },
            "fabric": {
                "technologies": ["roce_v2"],
                "topology": "fat_tree",
                "tiers": 3,
                "management_ports": 0,
                "switch": {"roce_v2": {"ports": 8, "port_speed_gbps": 100}},
            },
        }
    )
    graph = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    net = network_from_graph(graph, 32 * 2**20)
    spec = packet_spec("pfc", "hpcc", "ecmp", mtu_bytes=4000, header_bytes=82)
    traffic = permutation(GpuLayout(128, 1, 1), 4_000_000, seed=1)
    run_state(build_state(net, traffic, spec, 1))  # warm-up: load the compiled loop
    state = build_state(net, traffic, spec, 1)
    start = time.perf_counter()
    state, _ = run_state(state)
    wall = time.perf_counter() - start
    events = int(state.cnt[0])
    return events, wall, events / wall


def main() -> int:
    drop_stale_cache()  # a source checkout: forget machine code of changed kernels
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    py = python_heapq(1_000_000)
    nb = numba_heap(10_000_000)
    print(f"token workload, {TOKENS:,} pending events")
    print(f"  Python heapq + callbacks : {py / 1e6:6.2f} M events/s")
    print(f"  numba heap (numpy table): {nb / 1e6:6.2f} M events/s  ({nb / py:.0f}x)")
    events, wall, rate = simulator_rate()
    print(
        f"packet simulator, k=8 fat tree permutation: {events:,} events in {wall:.2f} s"
        f" = {rate / 1e6:.2f} M events/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
