"""Headroom arithmetic against hand-derived numbers from the published formulas (docs/refs.md C.3).

SONiC Mellanox (buffer_headroom_mellanox.lua): peer_response = quanta * 512 / 8; cable bytes =
2 * L * speed_Mbps * 1e9 / 198e6 / 8192; propagation = port_mtu + cable + mac_phy + peer;
occupancy = (100 - small + small * factor) / 100 with factor = cell / 64 above 128 B cells, else
2 * cell / (1 + cell); xoff = ceil_1024(lossless_mtu + propagation * occupancy).
mlx5 (port_buffer.c): xoff = (301 + 216 * L / 100) * speed_Mbps / 1000 + 272 * mtu / 100.
"""

from __future__ import annotations

import math

import pytest

from fabricplan.lint.checking.mtu import roce_mtu_for_netdev_mtu
from fabricplan.lint.headroom import (
    SPECTRUM_3,
    AsicBufferSpec,
    dynamic_threshold_trigger_bytes,
    mlx5_min_lossless_buffer_bytes,
    mlx5_xoff_bytes,
    pause_quanta,
    sonic_mellanox_headroom,
)

KIB = 1024
MAC_PHY = 0.8 * KIB
PIPELINE = 18 * KIB


def ceil_kib(value: float) -> int:
    return math.ceil(value / KIB) * KIB


def cable_bytes(length_m: float, speed_gbps: float) -> float:
    return 2 * length_m * speed_gbps * 1000 * 1e9 / 198e6 / (8 * KIB)


def test_400g_5m_by_hand() -> None:
    # Spectrum-3 cell 144 B > 128: factor 144/64 = 2.25; 50 % small packets: occupancy 1.625.
    occupancy = (100 - 50 + 50 * 2.25) / 100
    propagation = 9100 + cable_bytes(5, 400) + MAC_PHY + 905 * 512 / 8
    assert round(cable_bytes(5, 400), 2) == 2466.07
    record = sonic_mellanox_headroom(400, 5, 9100)
    assert record.xoff_bytes == ceil_kib(1024 + propagation * occupancy) == 115712
    assert record.xon_bytes == ceil_kib(PIPELINE) == 18432
    assert record.size_bytes == 115712 + 18432


def test_100g_40m_by_hand() -> None:
    # 100G pause quanta 394 -> 25,216 B; 40 m of cable -> 4,932 B.
    propagation = 9100 + cable_bytes(40, 100) + MAC_PHY + 394 * 64
    expected = ceil_kib(1024 + propagation * 1.625)
    assert expected == 66560
    assert sonic_mellanox_headroom(100, 40, 9100).xoff_bytes == expected


def test_800g_eight_lane_port() -> None:
    # 8 lanes: pipeline latency 2 * 18 KiB - 1 KiB, and the port MTU is added to the size.
    propagation = 9100 + cable_bytes(5, 800) + MAC_PHY + 905 * 64
    xoff = ceil_kib(1024 + propagation * 1.625)
    xon = ceil_kib(2 * PIPELINE - KIB)
    record = sonic_mellanox_headroom(800, 5, 9100, lanes=8)
    assert (record.xoff_bytes, record.xon_bytes) == (xoff, xon) == (119808, 35840)
    assert record.size_bytes == ceil_kib(xoff + xon + 9100) == 164864


def test_shared_headroom_pool_reserves_only_xon() -> None:
    record = sonic_mellanox_headroom(400, 300, 9100, shared_headroom_pool=True)
    assert record.size_bytes == record.xon_bytes == 18432


def test_small_cells_use_the_other_worst_case_factor() -> None:
    spectrum_1 = AsicBufferSpec("MELLANOX-SPECTRUM", 96, PIPELINE, MAC_PHY, 3.8 * KIB)
    factor = 2 * 96 / (1 + 96)
    occupancy = (100 - 100 + 100 * factor) / 100
    propagation = 9100 + cable_bytes(5, 100) + MAC_PHY + 394 * 64
    record = sonic_mellanox_headroom(100, 5, 9100, small_packet_pct=100, asic=spectrum_1)
    assert record.xoff_bytes == ceil_kib(1024 + propagation * occupancy)


def test_unknown_speed_falls_back_to_asic_peer_response() -> None:
    assert pause_quanta(300) is None
    propagation = 9100 + cable_bytes(5, 300) + MAC_PHY + SPECTRUM_3.peer_response_time_bytes
    assert sonic_mellanox_headroom(300, 5, 9100).xoff_bytes == ceil_kib(1024 + propagation * 1.625)


@pytest.mark.parametrize("length_m", [1, 5, 40, 100, 300, 1000])
def test_xoff_grows_with_cable_length(length_m: float) -> None:
    shorter = sonic_mellanox_headroom(400, length_m, 9100).xoff_bytes
    longer = sonic_mellanox_headroom(400, length_m + 100, 9100).xoff_bytes
    # 100 m more is 2 * 100 m of flight at 400G: about 49 KB * occupancy 1.625 more.
    assert longer - shorter == pytest.approx(cable_bytes(100, 400) * 1.625, abs=KIB)


def test_mlx5_by_hand() -> None:
    # (301 + 2.16 * 10 -> 322) * 100 + 2.72 * 4200 = 32200 + 11424.
    assert mlx5_xoff_bytes(100, 10, 4200) == 43624
    # 400G, 3 m, MTU 9000: (301 + 6) * 400 + 24480 = 147280; + 9216 + 128 = 156624 B, the
    # lossless buffer size ConnectX-7 reports for that port.
    assert mlx5_xoff_bytes(400, 3, 9000) == 147280
    assert mlx5_min_lossless_buffer_bytes(400, 3, 9000) == 156624


def test_mlx5_floors_speed_at_40g() -> None:
    assert mlx5_xoff_bytes(10, 5, 1500) == mlx5_xoff_bytes(40, 5, 1500) == 311 * 40 + 4080


def test_dynamic_threshold_trigger() -> None:
    # alpha = 2: T = 2 * (P - T) -> T = 2/3 P.
    assert dynamic_threshold_trigger_bytes(3_000_000, 1) == pytest.approx(2_000_000)


@pytest.mark.parametrize(
    ("netdev_mtu", "roce_mtu"),
    [(9000, 4096), (4192, 4096), (4191, 2048), (4096, 2048), (1500, 1024), (300, None)],
)
def test_roce_mtu_is_netdev_mtu_minus_96(netdev_mtu: int, roce_mtu: int | None) -> None:
    assert roce_mtu_for_netdev_mtu(netdev_mtu) == roce_mtu
