"""Each diagnosis rule fires on the pattern it describes, and not otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from fabricplan.measure.diagnosis import (
    Evidence,
    above_line_rate,
    busbw_dips,
    cpu_frequency,
    data_corruption,
    diagnose,
    high_latency,
    incomplete_run,
    low_large_busbw,
    nccl_warnings,
    perftest_low_bw,
    slow_at_scale,
    tcp_fallback,
)
from fabricplan.measure.expectation import ExpectedRecord, JudgedRecord, classify
from fabricplan.measure.measurement import BenchFileRecord, MeasurementRecord, RunRecord
from fabricplan.model.fabric import Finding
from fabricplan.model.scenario import ValidScenario
from fabricplan.spec import parse_spec

MIB = 2**20
GIB = 2**30
BAND = 0.15


@pytest.fixture(scope="module")
def valid() -> ValidScenario:
    return parse_spec({"cluster": {"gpus": 256, "nic_speed_gbps": 400, "nics_per_node": 8}})


def _nccl_run(
    path: str,
    sizes: dict[int, tuple[float, float]],
    *,
    test: str = "all_reduce",
    nodes: int = 4,
    tech: str = "roce_v2",
    run_kw: dict[str, Any] | None = None,
    wrong: float | None = 0.0,
) -> tuple[BenchFileRecord, list[JudgedRecord]]:
    """A run whose rows have (measured, expected) busbw per size; time follows busbw."""
    ranks = nodes * 8
    judged = []
    measurements = []
    for size, (measured, expected) in sizes.items():
        factor = 2 * (ranks - 1) / ranks
        m = MeasurementRecord(
            file=path,
            line=10,
            run=0,
            tool="nccl-tests",
            flavor="nccl-tests",
            test=test,
            size_bytes=size,
            time_us=factor * size / (measured * 1e3),
            algbw_GBps=measured / factor,
            busbw_GBps=measured,
            wrong=wrong,
            ranks=ranks,
            nodes=nodes,
        )
        e = ExpectedRecord(
            quantity="busbw_GBps",
            value=expected,
            low=expected * (1 - BAND),
            high=expected * (1 + BAND),
            busbw_GBps=expected,
            time_us=factor * size / (expected * 1e3),
        )
        ratio = measured / expected
        judged.append(
            JudgedRecord(
                measurement=m,
                technology=tech,
                expected=e,
                ratio=ratio,
                status=classify(ratio, 1 - BAND, 1 + BAND),
            )
        )
        measurements.append(m)
    run = RunRecord(
        index=0,
        tool="nccl-tests",
        flavor="nccl-tests",
        test=test,
        line=5,
        ranks=ranks,
        nodes=nodes,
        **(run_kw or {}),
    )
    return BenchFileRecord(
        path=path, format="nccl-tests text", runs=(run,), measurements=tuple(measurements)
    ), judged


def _perftest_run(
    path: str, test: str, rows: dict[int, tuple[float, float]], warnings: tuple[str, ...] = ()
) -> tuple[BenchFileRecord, list[JudgedRecord]]:
    lat = test.endswith("_lat")
    judged, measurements = [], []
    for size, (measured, expected) in rows.items():
        fields = {"latency_us": measured} if lat else {"bw_gbps": measured}
        m = MeasurementRecord(
            file=path,
            line=20,
            run=0,
            tool="perftest",
            flavor="perftest",
            test=test,
            size_bytes=size,
            time_us=measured if lat else 1.0,
            **fields,
        )
        e = ExpectedRecord(
            quantity=m.quantity,
            value=expected,
            low=expected,
            high=expected,
            time_us=expected if lat else None,
        )
        ratio = expected / measured if lat else measured / expected
        judged.append(
            JudgedRecord(
                measurement=m,
                technology="roce_v2",
                expected=e,
                ratio=ratio,
                status=classify(ratio, 1 - BAND, 1 + BAND),
            )
        )
        measurements.append(m)
    run = RunRecord(index=0, tool="perftest", flavor="perftest", test=test, line=3)
    return BenchFileRecord(
        path=path,
        format="perftest text",
        runs=(run,),
        measurements=tuple(measurements),
        warnings=warnings,
    ), judged


def _evidence(
    *parts: tuple[BenchFileRecord, list[JudgedRecord]], valid: ValidScenario | None = None
) -> Evidence:
    files = [f for f, _ in parts]
    judged = [j for _, js in parts for j in js]
    return Evidence.of(files, judged, valid, BAND)


HEALTHY = {
    s: (300.0 * min(1.0, s / (256 * MIB)), 300.0 * min(1.0, s / (256 * MIB)))
    for s in (MIB, 16 * MIB, 256 * MIB, GIB)
}
LOW = {s: (0.6 * e, e) for s, (_, e) in HEALTHY.items()}


def codes(findings: Sequence[Finding]) -> list[str]:
    return [f.code for f in findings]


def test_data_corruption(valid: ValidScenario) -> None:
    assert codes(data_corruption(_evidence(_nccl_run("a", HEALTHY, wrong=5.0)))) == [
        "bench.data_corruption"
    ]
    assert data_corruption(_evidence(_nccl_run("a", HEALTHY, wrong=0.0))) == []
    assert data_corruption(_evidence(_nccl_run("a", HEALTHY, wrong=None))) == []


def test_tcp_fallback() -> None:
    socket = _nccl_run("a", HEALTHY, run_kw={"technology_hint": "socket"})
    assert codes(tcp_fallback(_evidence(socket))) == ["bench.tcp_fallback"]
    assert (
        tcp_fallback(_evidence(_nccl_run("a", HEALTHY, run_kw={"technology_hint": "roce"}))) == []
    )


def test_incomplete_run_names_the_last_size() -> None:
    found = incomplete_run(_evidence(_nccl_run("a", HEALTHY, run_kw={"complete": False})))
    assert codes(found) == ["bench.incomplete"] and "1G" in found[0].message
    assert incomplete_run(_evidence(_nccl_run("a", HEALTHY))) == []


def test_low_busbw_on_lossless_ethernet_names_pfc_first(valid: ValidScenario) -> None:
    (finding,) = low_large_busbw(_evidence(_nccl_run("a", LOW, tech="roce_v2"), valid=valid))
    assert finding.code == "bench.low_busbw" and "60%" in finding.message
    causes = finding.message.split("Likely causes:")[1]
    assert causes.index("PFC") < causes.index("ACS")
    assert "ibstat" not in causes


def test_low_busbw_on_credit_links_names_link_rate_not_pfc(valid: ValidScenario) -> None:
    (finding,) = low_large_busbw(_evidence(_nccl_run("a", LOW, tech="infiniband"), valid=valid))
    causes = finding.message.split("Likely causes:")[1]
    assert "ibstat" in causes and "PFC" not in causes


def test_low_busbw_with_healthy_perftest_points_at_the_gpu_side(valid: ValidScenario) -> None:
    perftest = _perftest_run("p", "write_bw", {MIB: (390.0, 392.0)})
    (finding,) = low_large_busbw(_evidence(_nccl_run("a", LOW), perftest, valid=valid))
    causes = finding.message.split("Likely causes:")[1]
    assert "links are fine" in finding.message
    assert causes.index("ACS") < causes.index("PFC")


def test_low_busbw_quiet_when_within_band_or_only_small_sizes_low(valid: ValidScenario) -> None:
    assert low_large_busbw(_evidence(_nccl_run("a", HEALTHY), valid=valid)) == []
    near = {s: (0.9 * e, e) for s, (_, e) in HEALTHY.items()}
    assert low_large_busbw(_evidence(_nccl_run("a", near), valid=valid)) == []
    small_low = {MIB: (10.0, 30.0), 256 * MIB: (300.0, 300.0), GIB: (300.0, 300.0)}
    assert low_large_busbw(_evidence(_nccl_run("a", small_low), valid=valid)) == []


def test_slow_only_at_scale_points_between_leaves(valid: ValidScenario) -> None:
    small = _nccl_run("two.log", HEALTHY, nodes=2)
    big = _nccl_run("sixteen.log", LOW, nodes=16)
    (finding,) = slow_at_scale(_evidence(small, big, valid=valid))
    assert finding.code == "bench.slow_at_scale"
    assert "2 nodes" in finding.message and "16 nodes" in finding.message
    assert "ECMP" in finding.message


def test_slow_at_scale_quiet_when_all_fine_or_all_slow_or_only_small_slow() -> None:
    assert (
        slow_at_scale(
            _evidence(_nccl_run("a", HEALTHY, nodes=2), _nccl_run("b", HEALTHY, nodes=16))
        )
        == []
    )
    assert (
        slow_at_scale(_evidence(_nccl_run("a", LOW, nodes=2), _nccl_run("b", LOW, nodes=16))) == []
    )
    assert (
        slow_at_scale(_evidence(_nccl_run("a", LOW, nodes=2), _nccl_run("b", HEALTHY, nodes=16)))
        == []
    )


def test_two_node_all_reduce_above_line_rate_is_tree_not_error(valid: ValidScenario) -> None:
    # 8 x 400 Gb/s per node = 400 GB/s; tree on two nodes can show up to about twice that.
    fast = {GIB: (700.0, 700.0)}
    (finding,) = above_line_rate(_evidence(_nccl_run("a", fast, nodes=2), valid=valid))
    assert finding.severity == "info" and "NCCL_ALGO=Ring" in finding.message
    assert above_line_rate(_evidence(_nccl_run("a", fast, nodes=4), valid=valid)) == []
    assert (
        above_line_rate(_evidence(_nccl_run("a", {GIB: (380.0, 390.0)}, nodes=2), valid=valid))
        == []
    )
    ring = _nccl_run("a", fast, nodes=2, run_kw={"env": {"NCCL_ALGO": "Ring"}})
    assert above_line_rate(_evidence(ring, valid=valid)) == []
    assert above_line_rate(_evidence(_nccl_run("a", fast, nodes=2))) == []  # no spec


def test_high_latency_when_small_slow_and_large_fine() -> None:
    rows = {4096: (0.05, 0.1), 65536: (0.8, 1.6), 256 * MIB: (300.0, 300.0), GIB: (300.0, 300.0)}
    (finding,) = high_latency(_evidence(_nccl_run("a", rows)))
    assert finding.code == "bench.high_latency" and "CPU frequency" in finding.message
    assert high_latency(_evidence(_nccl_run("a", HEALTHY))) == []
    everything_slow = {4096: (0.05, 0.1), GIB: (150.0, 300.0)}
    assert high_latency(_evidence(_nccl_run("a", everything_slow))) == []


def test_high_latency_on_perftest_latency() -> None:
    slow = _perftest_run("lat", "write_lat", {2: (2.5, 1.3), 64: (2.5, 1.3)})
    assert codes(high_latency(_evidence(slow))) == ["bench.high_latency"]
    fine = _perftest_run("lat", "write_lat", {2: (1.35, 1.3)})
    assert high_latency(_evidence(fine)) == []


def test_busbw_dip_at_large_sizes() -> None:
    dip = {
        MIB: (100.0, 100.0),
        16 * MIB: (250.0, 250.0),
        64 * MIB: (150.0, 280.0),
        256 * MIB: (290.0, 290.0),
    }
    (finding,) = busbw_dips(_evidence(_nccl_run("a", dip)))
    assert "64M" in finding.message
    assert busbw_dips(_evidence(_nccl_run("a", HEALTHY))) == []
    wobble = {MIB: (100.0, 100.0), 16 * MIB: (250.0, 250.0), 64 * MIB: (230.0, 280.0)}
    assert busbw_dips(_evidence(_nccl_run("a", wobble))) == []


def test_perftest_low_bandwidth_only_at_large_messages() -> None:
    low = _perftest_run("bw", "read_bw", {65536: (183.0, 392.0)})
    (finding,) = perftest_low_bw(_evidence(low))
    assert "47%" in finding.message and "MTU" in finding.message
    small_low = _perftest_run("bw", "write_bw", {2: (0.05, 0.11), 65536: (389.0, 392.0)})
    assert perftest_low_bw(_evidence(small_low)) == []


def test_cpu_frequency_and_nccl_warn_rules() -> None:
    warned = _perftest_run(
        "p",
        "write_lat",
        {2: (1.3, 1.3)},
        warnings=("p:2: Conflicting CPU frequency values detected: 800.000000 != 3400.000000.",),
    )
    assert codes(cpu_frequency(_evidence(warned))) == ["bench.cpu_frequency"]
    file, judged = _nccl_run("a", HEALTHY)
    file = file.model_copy(
        update={
            "warnings": (
                "a:110: NCCL WARN NET/IB : Got completion from peer with status=12 opcode=0",
            )
        }
    )
    (finding,) = nccl_warnings(_evidence((file, judged)))
    assert "retry exceeded" in finding.message and "line 110" in finding.message
    assert nccl_warnings(_evidence(_nccl_run("a", HEALTHY))) == []
    assert cpu_frequency(_evidence(_nccl_run("a", HEALTHY))) == []


def test_diagnose_orders_errors_first(valid: ValidScenario) -> None:
    found = diagnose(
        _evidence(_nccl_run("a", LOW, wrong=3.0, nodes=2, run_kw={"complete": False}), valid=valid)
    )
    severities = [f.severity for f in found]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    assert {"bench.data_corruption", "bench.low_busbw", "bench.incomplete"} <= set(codes(found))
