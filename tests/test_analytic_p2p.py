"""perftest-like point to point: latency from its parts, bandwidth from header bytes and MTU."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from fabricplan.analytic.p2p import (
    P2P_MESSAGE_RATE_MPPS,
    P2P_TESTS,
    PCIE_READ_ROUND_TRIP_NS,
    PERFTEST_INLINE_BYTES,
    READ_OUTSTANDING,
    host_fetch_ns,
    p2p_point,
    p2p_points,
)
from fabricplan.analytic.performance import analytic_performance
from fabricplan.analytic.profile import (
    FabricProfile,
    fabric_profile,
    host_goodput_gbps,
    path_latency_ns,
)
from fabricplan.model.results import PerfRequest
from fabricplan.model.scenario import TechnologyName
from fabrics import cluster_scenario, designed_leaf_spine


def profile(tech: TechnologyName = "infiniband", **calibration: float) -> FabricProfile:
    valid = cluster_scenario(256)
    return fabric_profile(
        valid, designed_leaf_spine(valid, tech), PerfRequest(calibration=calibration or None)
    )


def test_write_lat_is_the_one_way_path_latency() -> None:
    prof = profile()
    valid = cluster_scenario(256)
    nic = valid.nics["infiniband"].latency_ns.value
    switch = valid.switches["infiniband"].latency_ns.value
    row = p2p_point(prof, "write_lat", 2, 3)
    # 2 adapters + 3 switches + 4 cables + one 28-byte packet at 400 Gb/s.
    cables = sum(n * ns for n, ns in zip((2, 2, 0), prof.cable_ns, strict=True))
    expected_ns = 2 * nic + 3 * switch + cables + (2 + 26) * 8 / 400
    assert row.latency_us == pytest.approx(expected_ns / 1000)


def test_read_lat_is_a_request_a_host_fetch_and_a_response() -> None:
    # The responder's NIC reads the data from its host memory: one PCIe round trip and the
    # payload at the host interface's payload rate, between the request and the response.
    prof = profile()
    size = 4096
    read = p2p_point(prof, "read_lat", size, 1).latency_us
    there = path_latency_ns(prof, 1, 0)
    back = path_latency_ns(prof, 1, size)
    assert prof.host_goodput_gbps is not None
    fetch = PCIE_READ_ROUND_TRIP_NS + size * 8 / prof.host_goodput_gbps
    assert read == pytest.approx((there + fetch + back) / 1000)
    assert read > 2 * p2p_point(prof, "write_lat", 2, 1).latency_us + PCIE_READ_ROUND_TRIP_NS / 1e3


def test_send_lat_takes_the_same_path_as_write_lat() -> None:
    # Both inline a small message; the receive WQE is prefetched and the completion entry is
    # written right after the data, so send_lat is not above write_lat (perftest publishes it
    # slightly below on ConnectX).
    prof = profile()
    for size in (2, 64, 200):
        send = p2p_point(prof, "send_lat", size, 1).latency_us
        write = p2p_point(prof, "write_lat", size, 1).latency_us
        assert send == pytest.approx(write)


def test_above_the_inline_size_the_nic_fetches_the_payload_over_pcie() -> None:
    # perftest inlines up to 220 B (write_lat) / 236 B (send_lat): the CPU writes the data into
    # the NIC with the doorbell. A larger message costs the sending NIC a DMA read first.
    prof = profile()
    small = p2p_point(prof, "write_lat", 32, 1).latency_us
    for size in (1024, 4096):
        row = p2p_point(prof, "write_lat", size, 1).latency_us
        wire_ns = path_latency_ns(prof, 1, size) - path_latency_ns(prof, 1, 32)
        assert row - small == pytest.approx((wire_ns + host_fetch_ns(prof, size)) / 1000)
        assert row - small > PCIE_READ_ROUND_TRIP_NS / 1000
    at = PERFTEST_INLINE_BYTES["send_lat"]
    assert (
        p2p_point(prof, "send_lat", at, 1).latency_us
        < p2p_point(prof, "write_lat", at, 1).latency_us
    )  # 236 B: inline for send, not for write


def test_a_connectx_back_to_back_latency_is_below_a_microsecond() -> None:
    # Two adapters at 350 ns per side (half a PCIe round trip + the NIC's pipeline), one cable:
    # well below the 1.2 us that 600 ns per side gave at 100G.
    valid = cluster_scenario(256)
    assert valid.nics["infiniband"].latency_ns.value == PCIE_READ_ROUND_TRIP_NS / 2 + 100
    row = p2p_point(profile(), "send_lat", 2, 0)
    assert row.latency_us < 0.8


@pytest.mark.parametrize(("tech", "header"), [("infiniband", 26), ("roce_v2", 82)])
def test_large_write_bw_is_the_link_goodput(tech: TechnologyName, header: int) -> None:
    row = p2p_point(profile(tech), "write_bw", 8 * 2**20, 1)
    assert row.bw_gbps == pytest.approx(400 * 4096 / (4096 + header))


def test_header_bytes_alone_make_infiniband_faster_per_byte() -> None:
    ib = p2p_point(profile("infiniband"), "write_bw", 2**22, 1).bw_gbps
    roce = p2p_point(profile("roce_v2"), "write_bw", 2**22, 1).bw_gbps
    assert ib / roce == pytest.approx((4096 + 82) / (4096 + 26))


def test_small_writes_are_message_rate_bound() -> None:
    row = p2p_point(profile(), "write_bw", 64, 1)
    assert row.bw_gbps == pytest.approx(64 * 8 * P2P_MESSAGE_RATE_MPPS / 1000)


def test_reads_are_window_bound_in_the_middle() -> None:
    prof = profile()
    size = 4096
    read = p2p_point(prof, "read_bw", size, 3)
    round_trip_ns = (
        path_latency_ns(prof, 3, 0) + host_fetch_ns(prof, size) + path_latency_ns(prof, 3, size)
    )
    window_gbps = READ_OUTSTANDING * size * 8 / round_trip_ns
    assert read.bw_gbps <= window_gbps + 1e-9
    assert read.bw_gbps <= p2p_point(prof, "write_bw", size, 3).bw_gbps


def test_nic_efficiency_lowers_bandwidth() -> None:
    base = p2p_point(profile(), "write_bw", 2**22, 1).bw_gbps
    slower = p2p_point(profile(nic_bw_efficiency=0.9), "write_bw", 2**22, 1).bw_gbps
    assert slower == pytest.approx(0.9 * base)


def test_bandwidth_never_falls_as_messages_grow() -> None:
    prof = profile()
    sizes = tuple(2**k for k in range(1, 24))
    rows = p2p_points(prof, sizes, 3)
    assert len(rows) == len(P2P_TESTS) * len(sizes)
    for test in ("write_bw", "read_bw", "send_bw"):
        bw = [r.bw_gbps for r in rows if r.test == test]
        assert all(b >= a - 1e-9 for a, b in itertools.pairwise(bw))


# --- the host interface (PCIe) -----------------------------------------------------------------


def test_pcie_goodput_comes_from_payload_and_tlp_bytes() -> None:
    # Gen4 x16 after 128b/130b: 252.06 Gb/s. A 256-byte write TLP costs 4 (STP token) + 16 (4 DW
    # header) + 4 (LCRC) more bytes.
    assert host_goodput_gbps(252.06) == pytest.approx(252.06 * 256 / (256 + 4 + 16 + 4))


def test_a_host_interface_slower_than_the_link_caps_write_bw() -> None:
    prof = replace(profile(), host_goodput_gbps=200.0)
    link = 400 * 4096 / (4096 + 26)
    assert link > 200.0
    for test in ("write_bw", "send_bw", "read_bw"):
        assert p2p_point(prof, test, 8 * 2**20, 1).bw_gbps == pytest.approx(200.0)


def test_a_host_interface_faster_than_the_link_changes_nothing() -> None:
    # ConnectX-7 on PCIe Gen5 x16 carries ~461 Gb/s of payload: a 400G port is the bound.
    prof = profile()
    assert prof.host_goodput_gbps is not None and prof.host_goodput_gbps > 400
    row = p2p_point(prof, "write_bw", 8 * 2**20, 1)
    assert row.bw_gbps == pytest.approx(400 * 4096 / (4096 + 26))


def test_the_host_bound_also_caps_the_collectives_nic_goodput() -> None:
    valid = cluster_scenario(256)
    prof = fabric_profile(valid, designed_leaf_spine(valid), PerfRequest())
    wire_GBps = 400 * 4096 / (4096 + 26) / 8  # noqa: N806
    assert prof.host_goodput_gbps is not None
    assert prof.nic_goodput_GBps == pytest.approx(min(wire_GBps, prof.host_goodput_gbps / 8))


# --- which pair perftest runs between ----------------------------------------------------------


def test_the_request_says_how_far_apart_the_perftest_hosts_are() -> None:
    valid = cluster_scenario(4096)
    design = designed_leaf_spine(valid)
    sizes = (2,)
    near = analytic_performance(
        valid, design, PerfRequest(collectives=(), sizes_bytes=sizes, step=False, p2p_switch_hops=1)
    )
    far = analytic_performance(
        valid, design, PerfRequest(collectives=(), sizes_bytes=sizes, step=False)
    )
    prof = fabric_profile(valid, design)
    near_lat = next(p for p in near.p2p if p.test == "write_lat").latency_us
    far_lat = next(p for p in far.p2p if p.test == "write_lat").latency_us
    assert near_lat == pytest.approx(path_latency_ns(prof, 1, 2) / 1000)
    assert far_lat == pytest.approx(path_latency_ns(prof, design.worst_case_switch_hops, 2) / 1000)
    assert far_lat > near_lat
    assert any("1 switch hop(s) apart (as asked)" in note for note in near.notes)


def test_a_multi_packet_message_is_fetched_while_it_is_sent() -> None:
    # ConnectX reads the payload from host memory packet by packet and sends each packet as it
    # arrives: beyond the round trip and the first packet, the fetch costs only what the PCIe
    # side is slower than the wire. 32 KiB = 8 packets of 4 KiB.
    size, mtu = 32768, 4096
    fast = replace(profile(), host_goodput_gbps=800.0)  # faster than the 400G wire
    rest_wire_ns = (size - mtu) * (4096 + fast.header_bytes) / 4096 * 8 / 400
    row_ns = p2p_point(fast, "write_lat", size, 1).latency_us * 1e3
    first_ns = PCIE_READ_ROUND_TRIP_NS + mtu * 8 / 800
    assert row_ns == pytest.approx(path_latency_ns(fast, 1, size) + first_ns)
    # A slot at half the wire rate: the rest of the message waits for PCIe.
    slow = replace(profile(), host_goodput_gbps=200.0)
    slow_ns = p2p_point(slow, "write_lat", size, 1).latency_us * 1e3
    host_rest_ns = (size - mtu) * 8 / 200
    expected = (
        path_latency_ns(slow, 1, size)
        + PCIE_READ_ROUND_TRIP_NS
        + mtu * 8 / 200
        + (host_rest_ns - rest_wire_ns)
    )
    assert slow_ns == pytest.approx(expected)
    # Never store and forward: the whole message is not fetched before the first packet leaves.
    saf_ns = path_latency_ns(slow, 1, size) + PCIE_READ_ROUND_TRIP_NS + size * 8 / 200
    assert slow_ns < saf_ns
