"""PFC headroom: how many bytes may still arrive after a port asks its peer to pause.

Two published formulas, written out as functions so that the linter, the generator and the
tests use one arithmetic:

- :func:`sonic_mellanox_headroom` — the SONiC dynamic-buffer calculation for NVIDIA Spectrum
  switches (sonic-net/sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua`` @18913fa35726). It is
  reproduced as the script computes it, including its units (speed in Mb/s, the cable term
  divided by 8*1024).
- :func:`mlx5_xoff_bytes` — the NVIDIA ConnectX receive-buffer xoff in the Linux mlx5 driver
  (``drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c`` @06449e9fba1e):
  ``xoff = (301 + 2.16 * cable_len[m]) * speed[Gb/s] + 2.72 * MTU[B]``, speed floored at 40G,
  integer arithmetic as in C.

And the dynamic-threshold pause trigger used to place ECN thresholds below PFC:
:func:`dynamic_threshold_trigger_bytes`.

References
----------
docs/refs.md C.3; IEEE 802.3 Annex 31B.3.7 (pause quanta per speed, as encoded in the script);
A. K. Choudhury and E. L. Hahne, "Dynamic queue length thresholds for shared-memory packet
switches", IEEE/ACM ToN 6(2), 1998 (dynamic threshold).

>>> sonic_mellanox_headroom(400, 5, 9100).xoff_bytes
115712
>>> mlx5_xoff_bytes(400, 7, 9000)
150880
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.units import BITS_PER_BYTE, KIB_BYTES, gbps_to_mbps

PAUSE_QUANTA_BY_SPEED_MBPS: dict[int, int] = {
    800_000: 905,
    400_000: 905,
    200_000: 453,
    100_000: 394,
    50_000: 147,
    40_000: 118,
    25_000: 80,
    10_000: 67,
    1_000: 2,
    100: 1,
}
"""Pause quanta the peer may take to react, per speed (IEEE 802.3 Annex 31B.3.7 as encoded in
buffer_headroom_mellanox.lua @18913fa35726)."""

PAUSE_QUANTUM_BITS = 512
"""One pause quantum is 512 bit times (IEEE 802.3 Annex 31B)."""

SIGNAL_SPEED_IN_CABLE_M_PER_S = 198_000_000
"""Propagation speed the SONiC script assumes (about 0.66 c)."""

MINIMAL_PACKET_BYTES = 64
"""Smallest Ethernet frame: the worst case for cell occupancy."""

HEADROOM_ROUNDING_BYTES = 1024
"""The SONiC script rounds xon, xoff and size up to whole KiB."""

SONIC_DEFAULT_LOSSLESS_MTU_BYTES = 1024
"""``LOSSLESS_TRAFFIC_PATTERN|AZURE.mtu`` in the SONiC buffer templates (docs/refs.md C.3)."""

SONIC_DEFAULT_SMALL_PACKET_PCT = 50.0
"""``LOSSLESS_TRAFFIC_PATTERN|AZURE.small_packet_percentage`` (docs/refs.md C.3)."""

MLX5_MIN_SPEED_GBPS = 40
"""port_buffer.c floors the speed at 40G in the xoff calculation."""

MLX5_MINIMUM_MAX_MTU_BYTES = 9216
"""port_buffer.c ``MINIMUM_MAX_MTU``: a lossless buffer must hold xoff plus this."""

MLX5_MAX_CABLE_LENGTH_M = 1000
"""Longest cable the mlx5 driver accepts for headroom (docs/refs.md C.3)."""


@dataclass(frozen=True, slots=True)
class AsicBufferSpec:
    """ASIC figures the SONiC script reads from STATE_DB ``ASIC_TABLE``."""

    name: str
    cell_bytes: int
    pipeline_latency_bytes: float
    mac_phy_delay_bytes: float
    peer_response_time_bytes: float
    """Used only for speeds missing from the pause-quanta table."""


SPECTRUM_3 = AsicBufferSpec(
    name="MELLANOX-SPECTRUM-3",
    cell_bytes=144,
    pipeline_latency_bytes=18 * KIB_BYTES,
    mac_phy_delay_bytes=0.8 * KIB_BYTES,
    peer_response_time_bytes=3.8 * KIB_BYTES,
)
"""sonic-buildimage ``files/build_templates/asic_table.j2`` (MELLANOX-SPECTRUM-2/-3: cell 144,
pipeline_latency 18, mac_phy_delay 0.8, peer_response_time 3.8, the last three in KiB), read at
stephenxs/sonic-buildimage @761bdf3e224b. No Spectrum-4 row was found; these figures stand in for
it and are named as an assumption wherever they are used."""


SPECTRUM_1 = AsicBufferSpec(
    name="MELLANOX-SPECTRUM",
    cell_bytes=96,
    pipeline_latency_bytes=18 * KIB_BYTES,
    mac_phy_delay_bytes=0.8 * KIB_BYTES,
    peer_response_time_bytes=3.8 * KIB_BYTES,
)
"""sonic-buildimage ``files/build_templates/asic_table.j2`` (MELLANOX-SPECTRUM: cell 96,
pipeline_latency 18, mac_phy_delay 0.8, peer_response_time 3.8 KiB), stephenxs/sonic-buildimage
@761bdf3e224b."""

SPECTRUM_4_ESTIMATE = AsicBufferSpec(
    name="MELLANOX-SPECTRUM-4 (estimate: the Spectrum-3 row)",
    cell_bytes=SPECTRUM_3.cell_bytes,
    pipeline_latency_bytes=SPECTRUM_3.pipeline_latency_bytes,
    mac_phy_delay_bytes=SPECTRUM_3.mac_phy_delay_bytes,
    peer_response_time_bytes=SPECTRUM_3.peer_response_time_bytes,
)
"""Estimate: the retrieved asic_table.j2 (@761bdf3e224b) has no Spectrum-4 row; Spectrum-2 and
Spectrum-3 share one set of figures, which is taken for Spectrum-4 too."""

ASIC_BUFFER_BY_ASIC: dict[str, AsicBufferSpec] = {
    "Spectrum": SPECTRUM_1,
    "Spectrum-2": SPECTRUM_3,
    "Spectrum-3": SPECTRUM_3,
    "Spectrum-4": SPECTRUM_4_ESTIMATE,
}
"""The SONiC ASIC_TABLE figures of each NVIDIA Spectrum ASIC (catalog ``asic`` names), for the
Mellanox headroom formula. Broadcom ASICs have no row: SONiC does not compute their headroom, it
ships static profiles per platform (``FrontPanelSpec.sonic_pg_profiles``)."""


SONIC_PLATFORM_ASIC: dict[str, str] = {
    "x86_64-mlnx_msn2700-r0": "Spectrum",
    "x86_64-mlnx_msn2410-r0": "Spectrum",
    "x86_64-mlnx_msn2100-r0": "Spectrum",
    "x86_64-mlnx_msn3700-r0": "Spectrum-2",
    "x86_64-mlnx_msn3800-r0": "Spectrum-2",
    "x86_64-mlnx_msn4700-r0": "Spectrum-3",
    "x86_64-nvidia_sn5600-r0": "Spectrum-4",
}
"""SONiC ``DEVICE_METADATA.platform`` -> Spectrum ASIC: asic_table.j2's ``platform2asic``
(@761bdf3e224b) and the SN5600 platform directory of sonic-buildimage
(``device/mellanox/x86_64-nvidia_sn5600-r0``)."""


def platform_buffer_spec(platform: str | None) -> AsicBufferSpec | None:
    """The ASIC_TABLE figures of a SONiC platform's ASIC, or ``None`` when it is not listed.

    >>> platform_buffer_spec("x86_64-mlnx_msn2700-r0").cell_bytes, platform_buffer_spec("x")
    (96, None)
    """
    return asic_buffer_spec(SONIC_PLATFORM_ASIC.get(platform or ""))


def asic_buffer_spec(asic: str | None) -> AsicBufferSpec | None:
    """The ASIC_TABLE figures of a Spectrum ASIC, or ``None`` for another ASIC.

    >>> asic_buffer_spec("Spectrum").cell_bytes, asic_buffer_spec("Tomahawk 5") is None
    (96, True)
    """
    return ASIC_BUFFER_BY_ASIC.get(asic or "")


@dataclass(frozen=True, slots=True)
class HeadroomRecord:
    """Headroom of one lossless priority group (bytes, rounded as the formula rounds)."""

    xon_bytes: int
    xoff_bytes: int
    size_bytes: int


def speed_scaled_headroom(
    record: HeadroomRecord, from_gbps: float, to_gbps: float
) -> HeadroomRecord:
    """A platform profile at ``from_gbps`` carried to a port at ``to_gbps`` (an estimate).

    The xoff of a lossless PG is the bytes that still arrive while the pause takes effect: the
    cable and the peer's response at line rate (every term of :func:`sonic_mellanox_headroom`
    but the MTUs grows with speed), so it is scaled by ``to / from``; xon and size are the
    platform's fixed reserve and are kept. Used for Broadcom ports at a speed their platform
    file does not list.

    >>> speed_scaled_headroom(HeadroomRecord(0, 612140, 18796), 400, 800)
    HeadroomRecord(xon_bytes=0, xoff_bytes=1224280, size_bytes=18796)
    """
    return HeadroomRecord(
        record.xon_bytes, math.ceil(record.xoff_bytes * to_gbps / from_gbps), record.size_bytes
    )


def pause_quanta(speed_gbps: float) -> int | None:
    """Pause quanta for a port speed, or ``None`` when the table has no row for it.

    >>> pause_quanta(400), pause_quanta(100), pause_quanta(300)
    (905, 394, None)
    """
    return PAUSE_QUANTA_BY_SPEED_MBPS.get(round(gbps_to_mbps(speed_gbps)))


def sonic_mellanox_headroom(
    speed_gbps: float,
    cable_length_m: float,
    port_mtu_bytes: int,
    *,
    lossless_mtu_bytes: int = SONIC_DEFAULT_LOSSLESS_MTU_BYTES,
    small_packet_pct: float = SONIC_DEFAULT_SMALL_PACKET_PCT,
    asic: AsicBufferSpec = SPECTRUM_3,
    gearbox_delay: float = 0.0,
    lanes: int = 4,
    shared_headroom_pool: bool = False,
) -> HeadroomRecord:
    """Headroom of a lossless PG as SONiC computes it on NVIDIA Spectrum switches.

    ::

        peer_response  = pause_quanta(speed) * 512 / 8
        bytes_on_cable = 2 * cable_m * speed_Mbps * 1e9 / 198e6 / (8 * 1024)
        propagation    = port_mtu + bytes_on_cable + 2 * bytes_on_gearbox + mac_phy + peer_response
        occupancy      = (100 - small% + small% * worst_case_factor) / 100
        xoff = ceil_1024(lossless_mtu + propagation * occupancy)
        xon  = ceil_1024(pipeline_latency)            (8 lanes: 2 * pipeline_latency - 1024)
        size = xon with a shared headroom pool, else xoff + xon (+ port_mtu on 8 lanes)

    Parameters
    ----------
    speed_gbps
        Port speed.
    cable_length_m
        Cable length configured for the port (``CABLE_LENGTH``).
    port_mtu_bytes
        The port MTU (the largest frame the port can receive).
    lossless_mtu_bytes, small_packet_pct
        ``LOSSLESS_TRAFFIC_PATTERN`` (template defaults 1024 B and 50 %).
    asic
        ASIC_TABLE figures (default: Spectrum-2/-3).
    gearbox_delay
        Gearbox delay as the script takes it (0 without a gearbox).
    lanes
        Lanes of the port (8-lane ports double the pipeline latency and add a port MTU).
    shared_headroom_pool
        True when the pool has a shared headroom (``xoff``) or an over-subscribe ratio.

    Returns
    -------
    HeadroomRecord
        xon, xoff and size in bytes.

    Examples
    --------
    400G, 5 m, port MTU 9100, Spectrum-3: occupancy 1.625, peer response 57,920 B, cable
    2,466 B, so xoff = ceil_1024(1024 + (9100 + 2466.06 + 819.2 + 57920) * 1.625) = 115,712 B.

    >>> sonic_mellanox_headroom(400, 5, 9100)
    HeadroomRecord(xon_bytes=18432, xoff_bytes=115712, size_bytes=134144)
    """
    speed_mbps = gbps_to_mbps(speed_gbps)
    quanta = pause_quanta(speed_gbps)
    peer_response = (
        quanta * PAUSE_QUANTUM_BITS / BITS_PER_BYTE
        if quanta is not None
        else asic.peer_response_time_bytes
    )
    pipeline_latency = asic.pipeline_latency_bytes
    speed_overhead = 0
    if lanes == 8:
        pipeline_latency = pipeline_latency * 2 - HEADROOM_ROUNDING_BYTES
        speed_overhead = port_mtu_bytes
    cell = asic.cell_bytes
    if cell > 2 * MINIMAL_PACKET_BYTES:
        worst_case_factor = cell / MINIMAL_PACKET_BYTES
    else:
        worst_case_factor = 2 * cell / (1 + cell)
    occupancy = (100 - small_packet_pct + small_packet_pct * worst_case_factor) / 100
    bytes_on_gearbox = speed_mbps * gearbox_delay / (8 * 1024) if gearbox_delay else 0.0
    bytes_on_cable = (
        2 * cable_length_m * speed_mbps * 1e9 / SIGNAL_SPEED_IN_CABLE_M_PER_S / (8 * 1024)
    )
    propagation = (
        port_mtu_bytes
        + bytes_on_cable
        + 2 * bytes_on_gearbox
        + asic.mac_phy_delay_bytes
        + peer_response
    )
    xoff = _ceil_kib(lossless_mtu_bytes + propagation * occupancy)
    xon = _ceil_kib(pipeline_latency)
    size = xon if shared_headroom_pool else xoff + xon + speed_overhead
    return HeadroomRecord(xon_bytes=xon, xoff_bytes=xoff, size_bytes=_ceil_kib(size))


def _ceil_kib(value: float) -> int:
    return math.ceil(value / HEADROOM_ROUNDING_BYTES) * HEADROOM_ROUNDING_BYTES


def mlx5_xoff_bytes(speed_gbps: float, cable_length_m: float, mtu_bytes: int) -> int:
    """The ConnectX receive-buffer xoff the mlx5 driver computes, in bytes.

    ``(301 + 216 * cable_len / 100) * speed_Mbps / 1000 + 272 * mtu / 100`` in integer
    arithmetic, speed floored at 40G.

    Examples
    --------
    400G, 7 m (the driver's default cable length), MTU 9000:
    (301 + 15) * 400 + 24,480 = 150,880 B.

    >>> mlx5_xoff_bytes(400, 7, 9000)
    150880
    >>> mlx5_xoff_bytes(25, 0, 1500)  # floored at 40G: 301 * 40 + 4080
    16120
    """
    speed_mbps = int(gbps_to_mbps(max(speed_gbps, MLX5_MIN_SPEED_GBPS)))
    cable = int(cable_length_m)
    return (301 + 216 * cable // 100) * speed_mbps // 1000 + 272 * int(mtu_bytes) // 100


def mlx5_min_lossless_buffer_bytes(
    speed_gbps: float, cable_length_m: float, mtu_bytes: int, cell_bytes: int = 128
) -> int:
    """Smallest lossless receive buffer the mlx5 driver accepts: ``xoff + max_mtu + cell``.

    ``max_mtu`` is at least 9216 B (``MINIMUM_MAX_MTU``); the cell defaults to the 128 B buffer
    stride of port_buffer.c.

    >>> mlx5_min_lossless_buffer_bytes(400, 7, 9000)
    160224
    """
    max_mtu = max(int(mtu_bytes), MLX5_MINIMUM_MAX_MTU_BYTES)
    return mlx5_xoff_bytes(speed_gbps, cable_length_m, mtu_bytes) + max_mtu + cell_bytes


def dynamic_threshold_trigger_bytes(pool_bytes: float, dynamic_th: float) -> float:
    """Occupancy at which a PG under a dynamic threshold stops taking shared buffer (and pauses).

    A PG may hold ``alpha * free`` with ``alpha = 2**dynamic_th``; alone on the pool it settles at
    ``T = alpha * (pool - T)``, i.e. ``T = alpha / (1 + alpha) * pool`` (Choudhury & Hahne 1998).

    >>> dynamic_threshold_trigger_bytes(1_000_000, 0)
    500000.0
    >>> round(dynamic_threshold_trigger_bytes(1_000_000, -4))
    58824
    """
    alpha: float = math.pow(2.0, dynamic_th)
    return alpha / (1 + alpha) * pool_bytes
