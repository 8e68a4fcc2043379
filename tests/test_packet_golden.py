"""Pinned results of small packet runs: a change to the event loop, the heap, the queues or the
table layout (work meant to make the simulator faster, not different) must leave every flow's
start and finish, every counter and every event count exactly as they were.

Each case is a k = 4 fat tree (16 hosts, 100 Gb/s) under one set of mechanisms: the scale
benchmark's PFC + HPCC + ECMP (``benchmarks/packet_scale.py``) on three seeds, DCQCN under
adaptive routing with a go-back-N receiver (out-of-order arrivals, NACKs, retransmissions),
lossy switches with 200 kB buffers (tail drops and a retransmission timeout) and a 12-to-1
incast under PFC (pause frames), two seeds each. The digests were recorded by running these
cases on the code before any speed work (commit f8bd68f, 2026-12-02), and the events counts
are printed beside them so that a failure says how far a run moved. A change that is *meant*
to alter results (a model fix) re-derives the digests on the code before and after and says
so in its commit.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fabricplan.sim.packet.kernel import RUN_DONE
from fabricplan.sim.packet.network import network_from_graph
from fabricplan.sim.packet.simulation import build_state, run_state
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.packet.state import (
    C_EVENTS,
    C_FREE,
    F_ACKED_PS,
    F_DUPS,
    F_FINISH_PS,
    F_OOO,
    F_RETX,
    F_SENT,
    F_START_PS,
    F_TIMEOUTS,
    L_DROPS,
    L_MAX_Q,
    L_PAUSE_FRAMES,
    L_STALL_PS,
    L_TX_BYTES,
    SimState,
)
from fabricplan.sim.traffic import Traffic
from fabrics import custom_flows, k_ary_fat_tree

PAYLOAD_BYTES = 4000
HEADER_BYTES = 82
DEEP_BUFFER_BYTES = 32 * 2**20
"""The scale benchmark's switch buffer (32 MiB)."""
FLOW_COLUMNS = (F_START_PS, F_FINISH_PS, F_ACKED_PS, F_RETX, F_TIMEOUTS, F_SENT, F_OOO, F_DUPS)
LINK_COLUMNS = (L_TX_BYTES, L_PAUSE_FRAMES, L_DROPS, L_MAX_Q, L_STALL_PS)


def random_peers(hosts: int, per_host: int, size_bytes: float, seed: int) -> Traffic:
    """``per_host`` flows from every host to seeded random other hosts (the benchmark's draw)."""
    src = np.repeat(np.arange(hosts), per_host)
    dst = (src + np.random.default_rng(seed).integers(1, hosts, src.size)) % hosts
    return custom_flows(src.tolist(), dst.tolist(), size_bytes)


def run_digest(state: SimState) -> str:
    """16 hex digits over the flows' times and transport counts, the links' counters and the
    run's counters (all but the free packet slots, which tell the pool's size, not a result)."""
    digest = hashlib.sha256()
    for column in FLOW_COLUMNS:
        digest.update(np.ascontiguousarray(state.fi[:, column]).tobytes())
    for column in LINK_COLUMNS:
        digest.update(np.ascontiguousarray(state.li[:, column]).tobytes())
    counters = state.cnt.copy()
    counters[C_FREE] = 0
    digest.update(counters.tobytes())
    return digest.hexdigest()[:16]


MECHANISMS: dict[str, tuple[str, str, str, str | None, float, str]] = {
    # name: flow control, congestion control, routing, delivery, switch buffer, traffic
    "hpcc": ("pfc", "hpcc", "ecmp", None, DEEP_BUFFER_BYTES, "peers"),
    "adaptive": ("pfc", "dcqcn", "adaptive", "in_order", DEEP_BUFFER_BYTES, "peers"),
    "lossy": ("none", "none", "ecmp", None, 200_000, "peers"),
    "incast": ("pfc", "none", "ecmp", None, 1_000_000, "incast"),
}
CASES = [  # (mechanisms, seed, digest, events), recorded on the code of f8bd68f
    ("hpcc", 1, "c1b7d3bb8f216c7b", 23888),
    ("hpcc", 2, "70e565168559984d", 24432),
    ("hpcc", 3, "07e9b9ba242f118b", 23618),
    ("adaptive", 1, "bb516b9d369667de", 41821),
    ("adaptive", 2, "9e68c3614667eb59", 45821),
    ("lossy", 1, "a36dc65fffb0081e", 25784),
    ("lossy", 2, "35e13fc302624b02", 26039),
    ("incast", 1, "e483ddf02547b396", 13073),
    ("incast", 2, "81158bed61d49e18", 13070),
]


def _traffic(kind: str, seed: int) -> Traffic:
    if kind == "peers":
        return random_peers(16, 4, 65_536, seed)
    return custom_flows(list(range(1, 13)), [0] * 12, 200_000)


@pytest.mark.parametrize(("name", "seed", "digest", "events"), CASES)
def test_a_small_run_is_exactly_what_it_was(name: str, seed: int, digest: str, events: int) -> None:
    fc, cc, routing, delivery, buffer, traffic = MECHANISMS[name]
    graph, _ = k_ary_fat_tree(4, "roce_v2")
    net = network_from_graph(graph, buffer)
    spec = packet_spec(fc, cc, routing, PAYLOAD_BYTES, HEADER_BYTES, delivery)  # type: ignore[arg-type]
    state, outcome = run_state(build_state(net, _traffic(traffic, seed), spec, seed))
    assert (int(state.cnt[C_EVENTS]), run_digest(state)) == (events, digest), name
    assert outcome == RUN_DONE


def test_the_digest_tells_one_changed_finish_time() -> None:
    graph, _ = k_ary_fat_tree(4, "roce_v2")
    net = network_from_graph(graph, DEEP_BUFFER_BYTES)
    spec = packet_spec("pfc", "hpcc", "ecmp", PAYLOAD_BYTES, HEADER_BYTES)
    state, _ = run_state(build_state(net, random_peers(16, 4, 65_536, 1), spec, 1))
    before = run_digest(state)
    state.fi[7, F_FINISH_PS] += 1  # one picosecond later for one flow
    assert run_digest(state) != before
