"""Packet simulator events per second as the fabric grows, at the same load per host.

Fat trees of 16-port (or ``--ports``) 100 Gb/s switches (2 tiers while ports² / 2 hosts fit, 3
beyond; 16 ports reach 1,024 hosts, 64 ports 65,536), 1 µs per link, 32 MiB switch buffers,
PFC, HPCC, ECMP (the yardstick's settings); every host sends ``--flows-per-host`` flows of
``--flow-bytes`` each to seeded random other hosts, all at t = 0. Prints per size: hosts,
flows, the CPU time to build the fabric, its network and the run's tables, events, the event
loop's CPU time and events per CPU second (CPU, not wall: the machine is shared), the
transport counters (timeouts, retransmits, drops, pause frames) and the process's peak RSS.

The loop runs ``--repeats`` times on fresh tables (the same seed, so the same events). One
timed loop is the run repeated on fresh tables until it has taken ``--min-loop-cpu`` seconds
of CPU (1 by default): the 64-host run alone takes 0.1-0.3 s, short enough for one
interruption to move it by tens of percent, so it is timed over several runs of the same load
(every size keeps the same flows per host and bytes per flow; a size whose one run is long
enough runs once). The table gives one run's events, the least and median CPU time of one run
(other processes only ever add to it), *runs per loop*, and events per CPU second of the best
and the median timed loop (its runs' events over their CPU). ``--working-set`` adds what the
run keeps live, sampled every 5,000 events: pending events (the heap) and packet slots in use.

``--pods 1 K`` runs each size once as it is and once as K disjoint copies of its fabric in one
run, every copy with its own hosts' flows (the same draw): each packet sees the paths, queues
and load of one copy, while the run's tables and its heap hold K times as much. Events per CPU
second of ``--hosts 64 --pods 1 16`` then tell how much of the 1,024-host run's slower rate the
size of its state alone explains (docs/performance.md). The copies route among themselves
(shortest paths of the packet network, not the designed fabric's router), so their event count
differs slightly from K times one copy's.

    .venv/bin/python benchmarks/packet_scale.py [--hosts 64 1024] [--ports 16] [--flows-per-host 8]
        [--flow-bytes 262144] [--repeats 3] [--min-loop-cpu 1.0] [--working-set] [--pods 1 16]
"""

from __future__ import annotations

import argparse
import itertools
import platform
import resource
import statistics
import sys
import time

import numpy as np
from fat_tree_fabric import fat_tree_network

from fabricplan.sim.packet.compiled import drop_stale_cache
from fabricplan.sim.packet.engine import HEAP_SIZE
from fabricplan.sim.packet.kernel import RUN_BUDGET, RUN_GROW, run_events
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.simulation import _grow, build_state, run_state
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.packet.state import (
    C_DROPS,
    C_EVENTS,
    C_FREE,
    C_PAUSES,
    C_RETX,
    C_TIMEOUTS,
    SimState,
)
from fabricplan.sim.traffic import StepSpec, Traffic

SPEED_GBPS = 100.0
LINK_DELAY_NS = 1000.0
PAYLOAD_BYTES = 4000
ROCE_HEADER_BYTES = 82
SWITCH_BUFFER_BYTES = 32 * 2**20
PORTS = 16


def fat_tree(hosts: int, ports: int = PORTS) -> PacketNetwork:
    """A fat tree of ``ports``-port 100G switches for ``hosts`` hosts, 1 µs on every link."""
    return fat_tree_network(hosts, ports, SWITCH_BUFFER_BYTES, LINK_DELAY_NS, SPEED_GBPS)


def random_peers(hosts: int, per_host: int, size_bytes: float, seed: int) -> Traffic:
    """``per_host`` flows from every host, each to a random other host (seeded)."""
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(hosts, dtype=np.int64), per_host)
    dst = (src + rng.integers(1, hosts, src.size)) % hosts
    return Traffic(
        src=src,
        dst=dst.astype(np.int64),
        size_bytes=np.full(src.size, float(size_bytes)),
        step=np.zeros(src.size, dtype=np.int64),
        offset_us=np.zeros(src.size),
        steps=(StepSpec("random peers", "custom"),),
    )


def disjoint_copies(net: PacketNetwork, copies: int) -> PacketNetwork:
    """``copies`` copies of ``net`` side by side, with no link between them: copy ``k`` holds
    hosts ``k x hosts ..`` and switches ``k x switches ..``."""
    hosts, switches = net.hosts, net.switches

    def vertex(v: np.ndarray, k: int) -> np.ndarray:
        return np.where(v < hosts, v + k * hosts, v - hosts + copies * hosts + k * switches)

    return PacketNetwork(
        hosts=copies * hosts,
        switches=copies * switches,
        link_src=np.concatenate([vertex(net.link_src, k) for k in range(copies)]),
        link_dst=np.concatenate([vertex(net.link_dst, k) for k in range(copies)]),
        link_speed_gbps=np.tile(net.link_speed_gbps, copies),
        link_delay_ns=np.tile(net.link_delay_ns, copies),
        switch_buffer_bytes=np.tile(net.switch_buffer_bytes, copies),
        name=f"{copies} x {net.name}",
    )


def copied_traffic(traffic: Traffic, hosts: int, copies: int) -> Traffic:
    """``traffic`` of one ``hosts``-host fabric repeated in each of ``copies`` copies."""
    return Traffic(
        src=np.concatenate([traffic.src + k * hosts for k in range(copies)]),
        dst=np.concatenate([traffic.dst + k * hosts for k in range(copies)]),
        size_bytes=np.tile(traffic.size_bytes, copies),
        step=np.tile(traffic.step, copies),
        offset_us=np.tile(traffic.offset_us, copies),
        steps=traffic.steps,
    )


WORKING_SET_EVENTS = 5_000
"""Events between two samples of the working set."""


def working_set(state: SimState) -> tuple[float, int, float, int]:
    """Run ``state`` to its end in chunks; (mean, max) pending events and packets in use."""
    pending: list[int] = []
    in_use: list[int] = []
    while True:
        outcome = int(run_events(state, WORKING_SET_EVENTS))
        pending.append(int(state.hmeta[HEAP_SIZE]))
        in_use.append(state.pi.shape[0] - int(state.cnt[C_FREE]))
        if outcome == RUN_GROW:
            state = _grow(state)
        elif outcome != RUN_BUDGET:
            return float(np.mean(pending)), max(pending), float(np.mean(in_use)), max(in_use)


def main(argv: list[str] | None = None) -> int:
    drop_stale_cache()  # a source checkout: forget machine code of changed kernels
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--flows-per-host", type=int, default=8)
    parser.add_argument("--flow-bytes", type=float, default=262_144)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ports", type=int, default=PORTS, help="switch ports (16: k=16)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the loop per size")
    parser.add_argument(
        "--min-loop-cpu", type=float, default=1.0, help="CPU s a timed loop runs at least"
    )
    parser.add_argument("--working-set", action="store_true", help="pending events, packets")
    parser.add_argument(
        "--pods", type=int, nargs="+", default=[1], help="disjoint copies of each fabric"
    )
    args = parser.parse_args(argv)
    spec = packet_spec("pfc", "hpcc", "ecmp", PAYLOAD_BYTES, ROCE_HEADER_BYTES)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(
        f"load: {args.flows_per_host} flows of {args.flow_bytes:,.0f} B per host, PFC+HPCC+ECMP,"
        f" {args.ports}-port switches"
    )
    if args.pods != [1]:
        print(f"copies of each fabric in one run (hosts = copies x size): {args.pods}")
    columns = ("hosts", "flows", "build CPU s", "events", "run CPU s least / median")
    columns = (*columns, "runs per loop", "events per CPU s best / median")
    more = ("timeouts", "retransmits", "drops", "pauses", "max RSS MiB")
    print("| " + " | ".join((*columns, *more)) + " |")
    print("|" + "---:|" * (len(columns) + len(more)))
    warm = False
    for hosts, pods in itertools.product(args.hosts, args.pods):
        start = time.process_time()
        net = fat_tree(hosts, args.ports)
        traffic = random_peers(hosts, args.flows_per_host, args.flow_bytes, args.seed)
        if not warm:  # load (or compile) the kernels outside the timing
            run_state(build_state(net, random_peers(hosts, 1, 8_000, args.seed), spec, 1))
            warm = True
            start = time.process_time()
            net = fat_tree(hosts, args.ports)
        if pods > 1:
            net = disjoint_copies(net, pods)
            traffic = copied_traffic(traffic, hosts, pods)
        state = build_state(net, traffic, spec, args.seed)
        build = time.process_time() - start
        cpus, rates = [], []  # one run's CPU; a timed loop's events per CPU second
        runs = 0
        for repeat in range(args.repeats):
            loop_cpu, loop_events, runs = 0.0, 0, 0
            while runs == 0 or loop_cpu < args.min_loop_cpu:
                if repeat or runs:
                    state = build_state(net, traffic, spec, args.seed)
                start = time.process_time()
                state, _ = run_state(state)
                cpu = time.process_time() - start
                cpus.append(cpu)
                loop_cpu += cpu
                loop_events += int(state.cnt[C_EVENTS])
                runs += 1
            rates.append(loop_events / loop_cpu)
        least, median = min(cpus), statistics.median(cpus)
        c = state.cnt
        events = int(c[C_EVENTS])
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| {net.hosts:,} | {traffic.flows:,} | {build:.2f} | {events:,}"
            f" | {least:.2f} / {median:.2f} | {runs}"
            f" | {max(rates) / 1e6:.2f} / {statistics.median(rates) / 1e6:.2f} M"
            f" | {int(c[C_TIMEOUTS]):,} | {int(c[C_RETX]):,} | {int(c[C_DROPS]):,}"
            f" | {int(c[C_PAUSES]):,} | {rss:,.0f} |",
            flush=True,
        )
        if args.working_set:
            mean_pending, max_pending, mean_in_use, max_in_use = working_set(
                build_state(net, traffic, spec, args.seed)
            )
            print(
                f"  {net.hosts:,} hosts: pending events mean {mean_pending:,.0f},"
                f" max {max_pending:,};"
                f" packets in use mean {mean_in_use:,.0f}, max {max_in_use:,}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
