"""What a seasoned network engineer would say on seeing these numbers.

Each rule looks for one pattern in the judged measurements and, when it is there, names the likely
causes in the order an engineer would check them. Rules say *why* in their docstrings (the same
text is in docs/measure.md). Causes that depend on the fabric follow its mechanisms, read from the
spec's technology: lossless Ethernet (``link_flow_control: pfc``) brings PFC, ECN and GID/traffic
class settings; credit-based links bring link width/speed and subnet-manager routing.

>>> from fabricplan.measure.measurement import MeasurementRecord
>>> m = MeasurementRecord(file="a.log", line=9, run=0, tool="nccl-tests", flavor="nccl-tests",
...     test="all_reduce", size_bytes=1 << 20, time_us=60.0, algbw_GBps=17.5, busbw_GBps=32.7,
...     wrong=12.0)
>>> [f.code for f in data_corruption(Evidence.of([], [JudgedRecord(measurement=m)]))]
['bench.data_corruption']
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fabricplan.measure.expectation import EXPECTED_BAND_FRACTION, JudgedRecord
from fabricplan.measure.measurement import BenchFileRecord, RunRecord
from fabricplan.model.fabric import Finding
from fabricplan.model.scenario import TechnologyName, ValidScenario
from fabricplan.units import format_size as size_label
from fabricplan.units import gbps_to_GBps

LARGE_MESSAGE_BYTES = 64 * 2**20
"""nccl-tests sizes at which busbw has reached its plateau on a multi-node run (bandwidth-bound)."""
SMALL_MESSAGE_BYTES = 64 * 2**10
"""Sizes at and below which a collective's time is latency-bound."""
PERFTEST_LARGE_BYTES = 64 * 2**10
"""perftest message sizes at which one QP reaches the link rate."""
DIP_START_BYTES = 2**20
"""From this size on, a healthy busbw curve does not fall as messages grow."""
DIP_FRACTION = 0.2
"""A fall of busbw by this share from the best smaller size counts as a dip (run-to-run noise of
a quiet fabric stays within a few percent)."""

_GPU_SIDE_CAUSES = (
    "PCIe ACS left on (P2P traffic detours through the root complex; disable ACS on the PCIe"
    " switches, or set the IOMMU to passthrough)",
    "GPUDirect RDMA not in use (nvidia-peermem or dma-buf missing; NCCL INFO shows 'GDRDMA' per"
    " channel when it is)",
    "a NIC or GPU in the wrong PCIe/NUMA place (nvidia-smi topo -m: each GPU should be PIX/PXB"
    " to its NIC)",
    "NCCL_IB_HCA not naming every rail's NIC",
)
_LOSSLESS_ETHERNET_CAUSES = (
    "PFC not enabled end to end on the RDMA priority (host mlnx_qos trust/pfc, every switch"
    " port): drops turn into go-back-N retransmissions",
    "ECN/DCQCN marking thresholds too low or CNPs not prioritised (rate cut too early)",
    "NCCL_IB_GID_INDEX not the RoCEv2 GID, or NCCL_IB_TC not the lossless traffic class",
    "MTU below 4096 on hosts or switches",
)
_CREDIT_CAUSES = (
    "a link trained below its rate or width (ibstat 'Rate', iblinkinfo shows degraded 1X/2X links)",
    "symbol or link-recovery errors on a cable (perfquery / ibdiagnet)",
    "subnet-manager routing or adaptive routing off (ibdiagnet --routing)",
)
_SCALE_CAUSES = (
    "ECMP hash collisions on the leaf uplinks (enable adaptive routing or packet spraying;"
    " NCCL_IB_SPLIT_DATA_ON_QPS=1 and NCCL_IB_QPS_PER_CONNECTION=2-4 spread flows)",
    "an oversubscribed, down or flapping uplink (switch port counters, link state)",
    "congestion control tuned for small fabrics (incast at the spines)",
)
_LATENCY_CAUSES = (
    "CPU frequency scaling or deep C-states (perftest warns 'Conflicting CPU frequency'; set the"
    " performance governor)",
    "the process not on the NIC's NUMA node (taskset / numactl)",
    "NCCL_PROTO restricting LL/LL128 (small messages then use Simple)",
    "more switch hops than the model assumes between the ranks",
    "interrupt moderation or polling settings (perftest uses polling by default)",
)
_PERFTEST_BW_CAUSES = (
    "the port not at full rate (ibstat 'Rate' / ethtool speed)",
    "the NIC's PCIe link below Gen5 x16 (lspci -vv LnkSta)",
    "a path MTU of 1024 on RoCE (4096 gives ~6 % more goodput)",
    "one QP is not enough at 400G and above (-q 2 or more)",
    "the process not on the NIC's NUMA node",
)


@dataclass
class Evidence:
    """Judged measurements grouped the ways rules need them."""

    files: Sequence[BenchFileRecord]
    judged: Sequence[JudgedRecord]
    valid: ValidScenario | None = None
    band: float = EXPECTED_BAND_FRACTION
    """Fallback half-width for rows judged without a band of their own."""
    by_run: dict[tuple[str, int], list[JudgedRecord]] = field(default_factory=dict)
    runs: dict[tuple[str, int], RunRecord] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        files: Sequence[BenchFileRecord],
        judged: Sequence[JudgedRecord],
        valid: ValidScenario | None = None,
        band: float = EXPECTED_BAND_FRACTION,
    ) -> Evidence:
        by_run: dict[tuple[str, int], list[JudgedRecord]] = defaultdict(list)
        for j in judged:
            by_run[(j.measurement.file, j.measurement.run)].append(j)
        runs = {(f.path, r.index): r for f in files for r in f.runs}
        return cls(files, judged, valid, band, dict(by_run), runs)

    def floor(self, rows: Sequence[JudgedRecord]) -> float:
        """The lowest ratio still as expected for these rows: the median of their bands' lower
        limits (``1 - band`` for rows judged without one)."""
        lows = [j.ratio_low for j in rows if j.ratio_low is not None]
        return statistics.median(lows) if lows else 1.0 - self.band

    def name(self, key: tuple[str, int]) -> str:
        run = self.runs.get(key)
        rows = self.by_run.get(key, [])
        test = run.test if run else (rows[0].measurement.test if rows else "?")
        ranks = run.ranks if run else None
        where = f"{key[0]}:{run.line}" if run else key[0]
        return f"{where} {test}" + (f" on {ranks} GPUs" if ranks else "")

    def lossless_ethernet(self, tech: TechnologyName | None) -> bool | None:
        """True when the fabric uses PFC, False with credits, None when unknown."""
        if self.valid is None or tech is None:
            return None
        return self.valid.technologies[tech].link_flow_control == "pfc"


def _causes(items: Sequence[str]) -> str:
    return "; ".join(f"({i}) {text}" for i, text in enumerate(items, 1))


def _median_ratio(rows: Sequence[JudgedRecord]) -> float | None:
    ratios = [j.ratio for j in rows if j.ratio is not None]
    return statistics.median(ratios) if ratios else None


def _large(rows: Sequence[JudgedRecord]) -> list[JudgedRecord]:
    return [j for j in rows if j.measurement.size_bytes >= LARGE_MESSAGE_BYTES]


def data_corruption(ev: Evidence) -> list[Finding]:
    """Rows with ``#wrong > 0``: the result was wrong, so bandwidth means nothing. Faulty GPU
    memory, a NIC, a cable flipping bits past the CRC, or a software bug; pairwise runs find the
    node."""
    bad = [j.measurement for j in ev.judged if j.measurement.wrong]
    if not bad:
        return []
    files = sorted({m.file for m in bad})
    return [
        Finding(
            code="bench.data_corruption",
            severity="error",
            message=f"{len(bad)} rows report wrong elements (#wrong > 0) in {', '.join(files)}: the"
            " collective returned corrupted data. Rerun with -c 1 and bisect"
            " with 2-node runs to find"
            " the node; check GPU memory errors (nvidia-smi -q -d ECC), NIC"
            " and cable error counters.",
        )
    ]


def tcp_fallback(ev: Evidence) -> list[Finding]:
    """NCCL printed ``NET/Socket``: it found no usable RDMA device and moved data over TCP, at a
    fraction of the line rate and with much higher latency."""
    runs = [key for key, run in ev.runs.items() if run.technology_hint == "socket"]
    if not runs:
        return []
    return [
        Finding(
            code="bench.tcp_fallback",
            severity="error",
            message=f"{ev.name(runs[0])}: NCCL used TCP sockets (NET/Socket), not RDMA. Check that"
            " the RDMA devices are visible (ibv_devices; in containers the RDMA device plugin or"
            " --device=/dev/infiniband), that NCCL_IB_HCA names them and"
            " NCCL_IB_DISABLE is not set.",
        )
    ]


def incomplete_run(ev: Evidence) -> list[Finding]:
    """A table without its footer: the program stopped (crash, timeout, a network error) or the
    log was cut; larger sizes are missing."""
    found = []
    for key, run in ev.runs.items():
        if not run.complete:
            rows = ev.by_run.get(key, [])
            last = max((j.measurement.size_bytes for j in rows), default=0)
            found.append(
                Finding(
                    code="bench.incomplete",
                    severity="warning",
                    message=f"{ev.name(key)}: the run stopped after size {size_label(last)};"
                    " see the warnings for the failure line (NCCL WARN, 'Test NCCL failure').",
                )
            )
    return found


def nccl_warnings(ev: Evidence) -> list[Finding]:
    """NCCL WARN lines. A completion with ``status=12`` (transport retry counter exceeded) means
    packets were lost and the QP gave up: a lossy RoCE class, a bad cable or a flapping port."""
    found = []
    for file in ev.files:
        warns = [w for w in file.warnings if "NCCL WARN" in w]
        if not warns:
            continue
        retry = any("status=12" in w or "retry" in w.lower() for w in warns)
        first = warns[0].removeprefix(f"{file.path}:")
        text = f"{file.path}: NCCL printed {len(warns)} warnings (first at line {first})." + (
            " Completion status 12 is 'retry exceeded': packets were lost. Check PFC on"
            " the RDMA class (RoCE), port error counters and cables on the named HCA."
            if retry
            else ""
        )
        found.append(Finding(code="bench.nccl_warn", severity="warning", message=text))
    return found


def low_large_busbw(ev: Evidence) -> list[Finding]:
    """Large-message busbw well below the model: the fabric, the hosts or the settings lose
    bandwidth. On lossless Ethernet the usual culprits are PFC/ECN and GID/TC settings; on
    credit-based links a degraded link; on both the GPU side (ACS, GPUDirect, PCIe placement).
    When perftest on the same cluster reaches line rate, the links are fine and the GPU side is
    first."""
    perftest_ok = any(
        j.ratio is not None
        and j.ratio >= ev.floor([j])
        and j.measurement.quantity == "bw_gbps"
        and j.measurement.size_bytes >= PERFTEST_LARGE_BYTES
        for j in ev.judged
    )
    found = []
    for key, rows in ev.by_run.items():
        large = [j for j in _large(rows) if j.measurement.tool == "nccl-tests"]
        ratio = _median_ratio(large)
        if ratio is None or ratio >= ev.floor(large):
            continue
        best = max(large, key=lambda j: j.measurement.size_bytes)
        tech = best.technology
        lossless = ev.lossless_ethernet(tech)
        fabric = (
            _LOSSLESS_ETHERNET_CAUSES if lossless else _CREDIT_CAUSES if lossless is False else ()
        )
        causes = (*_GPU_SIDE_CAUSES, *fabric) if perftest_ok else (*fabric, *_GPU_SIDE_CAUSES)
        expected = best.expected.value if best.expected else float("nan")
        lead = (
            " perftest reaches its expected rate, so the links are fine: look at the GPU"
            " side first."
            if perftest_ok
            else ""
        )
        found.append(
            Finding(
                code="bench.low_busbw",
                severity="error" if any(j.status == "fail" for j in large) else "warning",
                message=f"{ev.name(key)}: large-message busbw is {ratio:.0%} of expected"
                f" ({best.measurement.value:.1f} vs {expected:.1f} GB/s at"
                f" {size_label(best.measurement.size_bytes)} on {tech}).{lead} Likely causes: "
                + _causes(causes)
                + ".",
            )
        )
    return found


def slow_at_scale(ev: Evidence) -> list[Finding]:
    """A small run meets the model and a larger one does not: the hosts and NICs are fine and the
    loss is in the switches between leaves: hash collisions on the uplinks (ECMP), a bad or
    oversubscribed uplink, or congestion control."""
    groups: dict[
        tuple[str, TechnologyName | None], list[tuple[int, float, tuple[str, int], float]]
    ] = defaultdict(list)
    for key, rows in ev.by_run.items():
        large = [j for j in _large(rows) if j.measurement.tool == "nccl-tests"]
        ratio = _median_ratio(large)
        nodes = ev.runs[key].nodes if key in ev.runs else None
        if ratio is not None and nodes:
            entry = (nodes, ratio, key, ev.floor(large))
            groups[(large[0].measurement.test, large[0].technology)].append(entry)
    found = []
    for (test, tech), runs in groups.items():
        fine = [r for r in runs if r[1] >= r[3]]
        slow = [r for r in runs if r[1] < r[3]]
        if not fine or not slow:
            continue
        small = max(fine, key=lambda r: r[0])
        big = min((r for r in slow if r[0] > small[0]), default=None, key=lambda r: r[0])
        if big is None:
            continue
        found.append(
            Finding(
                code="bench.slow_at_scale",
                severity="warning",
                message=f"{test} on {tech}: {small[0]} nodes reach {small[1]:.0%} of expected busbw"
                f" but {big[0]} nodes only {big[1]:.0%} ({ev.name(big[2])}). Hosts and NICs are"
                " fine; the loss is likely between leaves. Likely causes: "
                + _causes(_SCALE_CAUSES)
                + ".",
            )
        )
    return found


def above_line_rate(ev: Evidence) -> list[Finding]:
    """2-node all_reduce busbw above the nodes' NIC line rate. busbw assumes a ring
    (2(n-1)/n of the data crosses each rank's links); on two nodes NCCL picks the tree (or NVLS)
    algorithm, which sends about half as much across the network, so busbw can reach twice the
    line rate. Not an error; ``NCCL_ALGO=Ring`` gives the number to compare with the NICs."""
    if ev.valid is None:
        return []
    cluster = ev.valid.spec.cluster
    line_GBps = gbps_to_GBps(cluster.nic_speed_gbps) * cluster.nics_per_node  # noqa: N806
    found = []
    for key, rows in ev.by_run.items():
        run = ev.runs.get(key)
        if (
            run is None
            or run.test != "all_reduce"
            or run.env.get("NCCL_ALGO", "").lower() == "ring"
        ):
            continue
        nodes = run.nodes or (run.ranks // cluster.gpus_per_node if run.ranks else None)
        peak = max((j.measurement.busbw_GBps or 0.0 for j in rows), default=0.0)
        if nodes == 2 and peak > line_GBps:
            found.append(
                Finding(
                    code="bench.above_line_rate",
                    severity="info",
                    message=f"{ev.name(key)}: busbw {peak:.0f} GB/s is above the"
                    " node's NIC line rate"
                    f" ({line_GBps:.0f} GB/s). On 2 nodes NCCL uses the tree (or NVLS) algorithm,"
                    " which moves about half the data a ring does across the network; busbw's ring"
                    " formula then exceeds the NICs. Not an error: run with NCCL_ALGO=Ring to"
                    " compare with the line rate.",
                )
            )
    return found


def high_latency(ev: Evidence) -> list[Finding]:
    """Small messages slow while large ones are fine: the path adds fixed time, not lost
    bandwidth — host settings (CPU frequency, NUMA, protocol choice) or extra hops."""
    found = []
    for key, rows in ev.by_run.items():
        small = [
            j
            for j in rows
            if j.measurement.quantity == "latency_us"
            or (
                j.measurement.tool == "nccl-tests"
                and j.measurement.size_bytes <= SMALL_MESSAGE_BYTES
            )
        ]
        ratio = _median_ratio(small)
        large_ratio = _median_ratio(_large(rows))
        if ratio is None or ratio >= ev.floor(small):
            continue
        if large_ratio is not None and large_ratio < ev.floor(_large(rows)):
            continue  # everything is slow: low_busbw speaks for it
        worst = min((j for j in small if j.ratio is not None), key=lambda j: j.ratio or 0.0)
        m = worst.measurement
        measured = m.latency_us if m.latency_us is not None else m.time_us
        expected = worst.expected.time_us if worst.expected else None
        shown = f"{measured:.2f} us vs {expected:.2f} us" if expected else f"{measured:.2f} us"
        found.append(
            Finding(
                code="bench.high_latency",
                severity="warning",
                message=f"{ev.name(key)}: small messages take longer than expected ({ratio:.0%} of"
                f" expected performance; {shown} at {size_label(m.size_bytes)}). Likely causes: "
                + _causes(_LATENCY_CAUSES)
                + ".",
            )
        )
    return found


def busbw_dips(ev: Evidence) -> list[Finding]:
    """busbw falling as messages grow beyond 1 MiB. A healthy curve rises to a plateau; a fall
    means congestion or losses at high load: PFC pause storms or aggressive DCQCN on RoCE, another
    job's traffic, a flapping link."""
    found = []
    for key, rows in ev.by_run.items():
        points = sorted(
            (j.measurement.size_bytes, j.measurement.busbw_GBps)
            for j in rows
            if j.measurement.busbw_GBps is not None and j.measurement.size_bytes >= DIP_START_BYTES
        )
        best = 0.0
        for size, busbw in points:
            if best > 0 and busbw is not None and busbw < (1 - DIP_FRACTION) * best:
                found.append(
                    Finding(
                        code="bench.busbw_dip",
                        severity="warning",
                        message=f"{ev.name(key)}: busbw falls to {busbw:.1f} GB/s at"
                        f" {size_label(size)} after {best:.1f} GB/s at a smaller"
                        " size. Congestion or"
                        " losses under load: check PFC pause and ECN/CNP counters (RoCE), port"
                        " retransmit and error counters, and whether another job"
                        " shared the fabric.",
                    )
                )
                break
            best = max(best, busbw or 0.0)
    return found


def perftest_low_bw(ev: Evidence) -> list[Finding]:
    """perftest bandwidth below the model at sizes where one QP should reach the link rate: a
    single link or host problem, before any collective algorithm is involved."""
    found = []
    for key, rows in ev.by_run.items():
        big = [
            j
            for j in rows
            if j.measurement.quantity == "bw_gbps"
            and j.measurement.size_bytes >= PERFTEST_LARGE_BYTES
        ]
        ratio = _median_ratio(big)
        if ratio is None or ratio >= ev.floor(big):
            continue
        best = max(big, key=lambda j: j.measurement.size_bytes)
        expected = best.expected.value if best.expected else float("nan")
        found.append(
            Finding(
                code="bench.perftest_low_bw",
                severity="error" if any(j.status == "fail" for j in big) else "warning",
                message=f"{ev.name(key)}: {best.measurement.value:.1f} Gb/s vs {expected:.1f} Gb/s"
                f" expected ({ratio:.0%}). Likely causes: " + _causes(_PERFTEST_BW_CAUSES) + ".",
            )
        )
    return found


def cpu_frequency(ev: Evidence) -> list[Finding]:
    """perftest measures time in CPU cycles; when the CPU frequency changes during the run its
    latencies and bandwidths are wrong, and it says so."""
    files = [f.path for f in ev.files if any("Conflicting CPU frequency" in w for w in f.warnings)]
    if not files:
        return []
    return [
        Finding(
            code="bench.cpu_frequency",
            severity="warning",
            message=f"{', '.join(files)}: perftest saw the CPU frequency change during the run; its"
            " times are unreliable. Set the performance governor (cpupower frequency-set -g"
            " performance) and rerun.",
        )
    ]


RULES: tuple[Callable[[Evidence], list[Finding]], ...] = (
    data_corruption,
    tcp_fallback,
    incomplete_run,
    nccl_warnings,
    low_large_busbw,
    slow_at_scale,
    above_line_rate,
    high_latency,
    busbw_dips,
    perftest_low_bw,
    cpu_frequency,
)


def diagnose(evidence: Evidence) -> tuple[Finding, ...]:
    """Every rule's findings, errors first."""
    order = {"error": 0, "warning": 1, "info": 2}
    found = [f for rule in RULES for f in rule(evidence)]
    return tuple(sorted(found, key=lambda f: order[f.severity]))
