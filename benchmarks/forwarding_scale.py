"""Packet-level set-up as the fabric grows: the forwarding table and a whole run's tables.

Fat trees of 64-port 100 Gb/s switches (2 tiers up to 2,048 hosts, 3 tiers beyond). Per size:
the switches and leaves; the CPU time to design the fabric and build its packet network; the
forwarding table per (switch, destination leaf) with its shared
next-hop groups (build time, bytes held, peak memory while building); the table a per-(switch,
host) layout would hold (counted, and built for the sizes given with ``--per-host``); and the
tables of a whole per-packet (spray) run with one 64 KiB flow per host (``build_state``: time,
peak memory traced by Python's allocator), or its refusal (FP660) when the tables, estimated
before any is allocated, would take more than ``--max-memory-gib``; and the process's peak RSS
so far. Times are CPU seconds of
this process (wall time on a shared machine counts the other jobs).

    .venv/bin/python benchmarks/forwarding_scale.py [--hosts 1024 4096 16384 65536]
        [--per-host 1024 4096] [--no-state] [--max-memory-gib 4]
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
import tracemalloc

import numpy as np
from fat_tree_fabric import fat_tree_network
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricplan.errors import ModelError
from fabricplan.sim.packet.compiled import drop_stale_cache
from fabricplan.sim.packet.forwarding import forwarding_table
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.simulation import build_state
from fabricplan.sim.packet.spec import packet_spec
from fabricplan.sim.traffic import StepSpec, Traffic

PORTS = 64
SPEED_GBPS = 100.0
SWITCH_BUFFER_BYTES = 32 * 2**20
MIB = 2**20


def fat_tree(hosts: int) -> PacketNetwork:
    """A fat tree of 64-port 100G switches for ``hosts`` hosts."""
    return fat_tree_network(hosts, PORTS, SWITCH_BUFFER_BYTES, speed_gbps=SPEED_GBPS)


def per_host_table(net: PacketNetwork) -> tuple[int, float]:
    """The layout this replaced (equal-cost links per switch x host, from distances to every
    host): its bytes and build seconds."""
    start = time.process_time()
    n = net.vertices
    up = net.link_speed_gbps > 0
    adj = csr_matrix((np.ones(int(up.sum())), (net.link_dst[up], net.link_src[up])), shape=(n, n))
    dist = shortest_path(adj, method="D", unweighted=True, indices=np.arange(net.hosts))
    from_switch = np.flatnonzero(net.link_src >= net.hosts)
    src, dst = net.link_src[from_switch], net.link_dst[from_switch]
    host_idx, col = np.nonzero(dist[:, dst] == dist[:, src] - 1)
    row = (src[col] - net.hosts) * net.hosts + host_idx
    order = np.lexsort((from_switch[col], row))
    links = from_switch[col][order].astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=net.switches * net.hosts))])
    return int(links.nbytes + ptr.nbytes), time.process_time() - start


def per_host_bytes(net: PacketNetwork) -> int:
    """Bytes of the per-host layout, counted from the new table without building it: one
    offset per (switch, host) and every row's links."""
    table = net.forwarding()
    counts = np.diff(table.ptr)
    hosts_per_column = np.bincount(table.dest_row, minlength=table.group.shape[1])
    per_row = np.where(table.group < 0, 1, counts[np.maximum(table.group, 0)])
    row_links = int((per_row * hosts_per_column[None, :]).sum())
    return 8 * (net.switches * net.hosts + 1) + 8 * row_links


def one_flow_per_host(hosts: int) -> Traffic:
    src = np.arange(hosts, dtype=np.int64)
    return Traffic(
        src,
        (src + hosts // 2 + 1) % hosts,
        np.full(hosts, 65_536.0),
        np.zeros(hosts, dtype=np.int64),
        np.zeros(hosts),
        (StepSpec("shift", "custom"),),
    )


def main(argv: list[str] | None = None) -> int:
    drop_stale_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1024, 4096, 16384, 65536])
    parser.add_argument("--per-host", type=int, nargs="*", default=[1024, 4096])
    parser.add_argument("--no-state", type=int, nargs="*", default=[])
    parser.add_argument("--max-memory-gib", type=float, default=4.0)
    args = parser.parse_args(argv)
    print(
        f"machine: {platform.machine()}, {platform.processor()}, Python {platform.python_version()}"
    )
    print(
        "| hosts | switches | leaves | links | network CPU s | table CPU s | table MiB | peak MiB"
        " | groups | per-host MiB (CPU s) | run tables CPU s | run peak MiB | max RSS MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    spec = packet_spec("pfc", "hpcc", "spray", 4000, 82)
    tiny = fat_tree(64)
    build_state(tiny, one_flow_per_host(64), spec, seed=1)  # load the compiled event heap
    for hosts in args.hosts:
        start = time.process_time()
        net = fat_tree(hosts)
        network_s = time.process_time() - start
        tracemalloc.start()
        start = time.process_time()
        table = forwarding_table(net)
        table_s = time.process_time() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        net._cache["fib"] = table
        leaves = int(table.group.shape[1] - 1)
        old = f"{per_host_bytes(net) / MIB:,.0f} (counted)"
        if hosts in args.per_host:
            nbytes, seconds = per_host_table(net)
            old = f"{nbytes / MIB:,.0f} ({seconds:.2f} s)"
        state_s, state_peak = "—", "—"
        if hosts not in args.no_state:
            tracemalloc.start()
            start = time.process_time()
            try:
                build_state(
                    net,
                    one_flow_per_host(hosts),
                    spec,
                    seed=1,
                    max_memory_bytes=int(args.max_memory_gib * 2**30),
                )
                state_peak = f"{tracemalloc.get_traced_memory()[1] / MIB:,.0f}"
            except ModelError as refused:
                state_peak = f"refused: {refused.what} [{refused.code}]"
            state_s = f"{time.process_time() - start:.2f}"
            tracemalloc.stop()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| {hosts:,} | {net.switches:,} | {leaves:,} | {net.links:,} | {network_s:.2f}"
            f" | {table_s:.2f} | {table.nbytes / MIB:,.1f} | {peak / MIB:,.0f} | {table.groups:,}"
            f" | {old} | {state_s} | {state_peak} | {rss:,.0f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
