"""fabricplan's packet level beside htsim on one small scenario, like for like, two regimes.

A k = 8 fat tree (3 tiers of 8-port switches, 128 hosts), 100 Gb/s links, 1 µs on every link,
no switch or NIC latency (store and forward, as htsim's ``-hop_latency 1 -switch_latency 0``),
4,000-byte packets on the wire (no header counted apart, as htsim's ``-mtu 4000``), ECMP per
flow, senders at line rate with no congestion control (htsim's ``htsim_roce``), a seeded
permutation of ``--flow-bytes`` per host, all starting at t = 0. Two buffer regimes:

- ``deep``: buffers no permutation can fill (32 MiB per switch here; htsim ``-q 8192`` packets
  per port with PFC thresholds above it), so neither pauses nor drops: only ECMP collisions
  shape the completion times.
- ``shallow``: PFC on every port with a static threshold of 15 packets per ingress port (XON
  3 packets below it), as htsim's ``LosslessInputQueue`` (``-pfc_thresholds 12 15``).

The script runs fabricplan, writes the permutation as a connection matrix (htsim's ``-tm``
format) and, when given htsim's output for a regime (``--htsim-deep FILE``, ``--htsim-shallow
FILE``: the stdout of the command it prints, run by hand from htsim built outside this
repository), reads its ``Flow ... finished at T`` lines and compares the completion times.
htsim is never needed to run this script.

    .venv/bin/python benchmarks/htsim_pair.py [--tm-out perm.cm] [--htsim-deep deep.txt]
        [--htsim-shallow shallow.txt] [--seed 1] [--flow-bytes 1000000]
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
from fat_tree_fabric import fat_tree_network

from fabricplan.sim.packet.compiled import drop_stale_cache
from fabricplan.sim.packet.network import PacketNetwork
from fabricplan.sim.packet.result import PacketSimResult
from fabricplan.sim.packet.simulation import build_state, run_state, simulate_packet
from fabricplan.sim.packet.spec import PacketSpec, packet_spec
from fabricplan.sim.traffic import StepSpec, Traffic

K = 8
HOSTS = K**3 // 4
SPEED_GBPS = 100.0
LINK_DELAY_NS = 1000.0
PACKET_BYTES = 4000
DEEP_BUFFER_BYTES = 32 * 2**20
SHALLOW_XOFF_PACKETS, SHALLOW_XON_PACKETS = 15, 12
"""htsim main_roce.cpp defaults: ``high_pfc = 15, low_pfc = 12`` packets per input queue."""
SHALLOW_PORT_PACKETS = 64
"""Shared buffer per port in the shallow regime (and htsim's ``-q``)."""
FINISHED = re.compile(r"Flow \S+ \d+ finished at ([0-9.e+]+)")
"""htsim RoceSrc prints this when the last byte is acknowledged (time in µs)."""


def network(buffer_bytes: float) -> PacketNetwork:
    """The k = 8 fat tree, 1 µs on every link, no NIC or switch latency."""
    return fat_tree_network(HOSTS, K, buffer_bytes, LINK_DELAY_NS, SPEED_GBPS, tiers=3)


def permutation_traffic(flow_bytes: float, seed: int) -> Traffic:
    """Every host sends to one other host, each host receives once (a seeded derangement)."""
    rng = np.random.default_rng(seed)
    while True:
        dst = rng.permutation(HOSTS)
        if not (dst == np.arange(HOSTS)).any():
            break
    return Traffic(
        np.arange(HOSTS, dtype=np.int64),
        dst.astype(np.int64),
        np.full(HOSTS, float(flow_bytes)),
        np.zeros(HOSTS, dtype=np.int64),
        np.zeros(HOSTS),
        (StepSpec("permutation", "permutation"),),
    )


def connection_matrix(traffic: Traffic) -> str:
    """The traffic in htsim's connection-matrix format."""
    lines = [f"Nodes {HOSTS}", f"Connections {traffic.flows}"]
    for i, (a, b, s) in enumerate(zip(traffic.src, traffic.dst, traffic.size_bytes, strict=True)):
        lines.append(f"{a}->{b} id {i + 1} start 0 size {int(s)}")
    return "\n".join(lines) + "\n"


def regime_spec(regime: str) -> tuple[PacketSpec, float]:
    """Our spec and switch buffer for a regime (see the module docstring)."""
    if regime == "deep":
        return packet_spec("none", "none", "ecmp", PACKET_BYTES, 0), DEEP_BUFFER_BYTES
    spec = packet_spec("pfc", "none", "ecmp", PACKET_BYTES, 0)
    pfc = dataclasses.replace(
        spec.pfc,
        static_xoff_bytes=SHALLOW_XOFF_PACKETS * PACKET_BYTES,
        resume_offset_bytes=(SHALLOW_XOFF_PACKETS - SHALLOW_XON_PACKETS) * PACKET_BYTES,
    )
    return dataclasses.replace(spec, pfc=pfc), float(K * SHALLOW_PORT_PACKETS * PACKET_BYTES)


def htsim_command(regime: str, matrix: str) -> str:
    """The htsim_roce command of a regime (run by hand; its stdout is ``--htsim-REGIME``)."""
    queue = 8192 if regime == "deep" else SHALLOW_PORT_PACKETS
    low, high = (6000, 8000) if regime == "deep" else (SHALLOW_XON_PACKETS, SHALLOW_XOFF_PACKETS)
    return (
        f"/usr/bin/time -v htsim_roce -nodes {HOSTS} -tiers 3 -tm {matrix} -strat ecmp_host"
        f" -paths 256 -mtu {PACKET_BYTES} -linkspeed {int(SPEED_GBPS * 1000)}"
        f" -hop_latency 1 -switch_latency 0 -queue_type lossless_input -q {queue}"
        f" -pfc_thresholds {low} {high} -end 100000 -o /dev/null"
    )


def htsim_run(path: Path) -> dict[str, float | None]:
    """htsim's run from its stdout: events (``Events N``, a counter added by hand to the main
    loop of the build measured), CPU and wall seconds and peak RSS MiB (``/usr/bin/time -v``)."""
    text = path.read_text(errors="replace")

    def number(pattern: str) -> float | None:
        match = re.search(pattern, text, re.MULTILINE)
        return float(match.group(1)) if match else None

    user = number(r"User time \(seconds\): ([\d.]+)")
    system = number(r"System time \(seconds\): ([\d.]+)")
    wall = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text
    )
    rss = number(r"Maximum resident set size \(kbytes\): (\d+)")
    return {
        "events": number(r"^Events (\d+)$"),
        "cpu_s": None if user is None else user + (system or 0.0),
        "wall_s": None
        if wall is None
        else int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3)),
        "rss_mib": None if rss is None else rss / 1024,
    }


def htsim_fcts_us(path: Path) -> np.ndarray:
    """Completion time of every flow htsim reports (µs)."""
    text = path.read_text(errors="replace")
    return np.array([float(m.group(1)) for m in FINISHED.finditer(text)])


def percentiles(fct: np.ndarray) -> str:
    if fct.size == 0:
        return "— | — | — | —"
    p50, p99 = np.percentile(fct, [50, 99])
    return f"{fct.min():.1f} | {p50:.1f} | {p99:.1f} | {fct.max():.1f}"


def _shown(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    drop_stale_cache()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flow-bytes", type=float, default=1_000_000)
    parser.add_argument("--tm-out", type=Path, default=None)
    parser.add_argument("--htsim-deep", type=Path, default=None)
    parser.add_argument("--htsim-shallow", type=Path, default=None)
    args = parser.parse_args(argv)
    traffic = permutation_traffic(args.flow_bytes, args.seed)
    if args.tm_out is not None:
        args.tm_out.write_text(connection_matrix(traffic))
    matrix = str(args.tm_out or "PERM.cm")
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    print(
        f"{HOSTS} hosts, k={K} fat tree, permutation of {args.flow_bytes:,.0f} B, seed {args.seed}"
    )
    warm_spec, warm_buffer = regime_spec("shallow")
    simulate_packet(network(warm_buffer), permutation_traffic(8_000, 0), warm_spec)  # compile
    print(
        "| simulator | regime | loop CPU s | loop wall s | events | events per CPU s"
        " | drops | pauses | FCT min us | p50 | p99 | max | peak RSS MiB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    given = {"deep": args.htsim_deep, "shallow": args.htsim_shallow}
    for regime in ("deep", "shallow"):
        spec, buffer = regime_spec(regime)
        net = network(buffer)
        state = build_state(net, traffic, spec, args.seed)
        start, cpu = time.perf_counter(), time.process_time()
        state, _ = run_state(state)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        result = PacketSimResult.from_state(net, traffic, spec, args.seed, state, "done", wall)
        ours = np.asarray(result.acked_us - result.start_us, dtype=np.float64)  # as htsim
        c = result.counters
        events = int(c["events"])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"| fabricplan | {regime} | {cpu:.2f} | {wall:.2f} | {events:,}"
            f" | {events / cpu / 1e6:.2f} M | {c['drops']:,} | {c['pause_frames']:,}"
            f" | {percentiles(ours)} | {peak:.0f} (process so far) |"
        )
        run = given[regime]
        if run is None:
            print(f"<!-- htsim {regime}: {htsim_command(regime, matrix)} -->")
            continue
        h, theirs = htsim_run(run), htsim_fcts_us(run)
        rate = f"{h['events'] / h['cpu_s'] / 1e6:.2f} M" if h["events"] and h["cpu_s"] else "—"
        print(
            f"| htsim_roce | {regime} | {_shown(h['cpu_s'])} (whole run) | {_shown(h['wall_s'])}"
            f" | {_shown(h['events'], 0)} | {rate} | — | — | {percentiles(theirs)}"
            f" | {_shown(h['rss_mib'], 0)} |"
        )
        if theirs.size and ours.size:
            p50 = np.percentile(ours, 50) / np.percentile(theirs, 50) - 1
            p99 = np.percentile(ours, 99) / np.percentile(theirs, 99) - 1
            print(f"<!-- {regime}: fabricplan vs htsim FCT p50 {p50:+.1%}, p99 {p99:+.1%} -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
