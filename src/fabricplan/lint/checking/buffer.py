"""Headroom rules: enough xoff for the speed, cable and MTU (L06); a real cable length (L07).

Switch headroom is compared with the SONiC Mellanox formula (the only published switch formula,
docs/refs.md C.3), with the Spectrum-2/-3 ASIC figures; NIC headroom with the mlx5 formula.

>>> from fabricplan.lint.model import BufferProfile, DeviceConfig, PortConfig
>>> small = BufferProfile("pg_lossless", True, size_bytes=100_000, xoff_bytes=80_000)
>>> port = PortConfig("Ethernet0", speed_gbps=400, mtu_bytes=9100, cable_length_m=5,
...     pfc_priorities=frozenset({3}), ingress_buffers={3: small})
>>> sw = DeviceConfig("leaf1", "switch", "sonic", "leaf1.json", ports=(port,))
>>> from fabricplan.lint.checking.rule import LintContext, infer_intent
>>> [f.what for f in check_headroom(LintContext((sw,), infer_intent([sw])))]
['xoff is below the 115712 B the SONiC Mellanox formula needs at 400G, 5 m, MTU 9100']
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricplan.lint.checking.rule import (
    LintContext,
    LintFinding,
    finding,
    format_value,
    grouped,
    lossless_domain,
    port_list,
)
from fabricplan.lint.headroom import (
    MLX5_MAX_CABLE_LENGTH_M,
    SONIC_DEFAULT_LOSSLESS_MTU_BYTES,
    SONIC_DEFAULT_SMALL_PACKET_PCT,
    SPECTRUM_3,
    mlx5_min_lossless_buffer_bytes,
    platform_buffer_spec,
    sonic_mellanox_headroom,
)
from fabricplan.lint.model import DeviceConfig, PortConfig

SONIC_DEFAULT_PORT_MTU_BYTES = 9100
"""SONiC's default port MTU when ``PORT.mtu`` is absent."""
CABLE_LENGTH_FORMATS = frozenset({"sonic", "nvue", "mlnx_qos"})
"""Formats that carry a cable length for headroom (EOS sizes headroom itself)."""


def _required_switch_xoff(device: DeviceConfig, port: PortConfig) -> int | None:
    if port.speed_gbps is None or port.cable_length_m is None:
        return None
    return sonic_mellanox_headroom(
        port.speed_gbps,
        port.cable_length_m,
        port.mtu_bytes or SONIC_DEFAULT_PORT_MTU_BYTES,
        lossless_mtu_bytes=device.lossless_mtu_bytes or SONIC_DEFAULT_LOSSLESS_MTU_BYTES,
        small_packet_pct=(
            device.small_packet_percentage
            if device.small_packet_percentage is not None
            else SONIC_DEFAULT_SMALL_PACKET_PCT
        ),
        lanes=port.lanes or 4,
        # The platform's ASIC row when the config names it (DEVICE_METADATA.platform).
        asic=platform_buffer_spec(device.asic) or SPECTRUM_3,
    ).xoff_bytes


def check_headroom(ctx: LintContext) -> Iterator[LintFinding]:
    """L06: configured xoff (switch) or lossless buffer (NIC) >= the published formula."""
    for device in ctx.switches:
        short: list[tuple[tuple[int, float, int], PortConfig]] = []
        for port in lossless_domain(device):
            required = _required_switch_xoff(device, port)
            if required is None:
                continue
            for priority in sorted(port.pfc_set):
                profile = port.ingress_buffers.get(priority)
                if profile is None or profile.dynamic or profile.xoff_bytes is None:
                    continue
                if profile.xoff_bytes < required:
                    short.append(((priority, profile.xoff_bytes, required), port))
        groups: dict[tuple[int, float, int], list[PortConfig]] = {}
        for key, port in short:
            groups.setdefault(key, []).append(port)
        for (priority, xoff, required), group in groups.items():
            port = group[0]
            yield finding(
                "L06",
                device,
                f"{port_list(group)} priority {priority} xoff",
                f"{format_value(xoff)} B",
                f"xoff is below the {required} B the SONiC Mellanox formula needs at"
                f" {format_value(port.speed_gbps)}G, {format_value(port.cable_length_m)} m,"
                f" MTU {port.mtu_bytes or SONIC_DEFAULT_PORT_MTU_BYTES}",
                port.origin_of(f"ingress_buffers.{priority}"),
            )
    for device in ctx.nics:
        yield from _nic_headroom(ctx, device)


def _nic_headroom(ctx: LintContext, device: DeviceConfig) -> Iterator[LintFinding]:
    nic, port = device.nic, device.ports[0]
    if nic is None or nic.buffer_sizes_bytes is None or nic.prio2buffer is None:
        return
    if port.speed_gbps is None:
        return
    cable = port.cable_length_m if port.cable_length_m is not None else 0.0
    required = mlx5_min_lossless_buffer_bytes(port.speed_gbps, cable, port.mtu_bytes or 1500)
    for priority in sorted(port.pfc_set):
        if priority >= len(nic.prio2buffer):
            continue
        buffer = nic.prio2buffer[priority]
        if buffer >= len(nic.buffer_sizes_bytes):
            continue
        size = nic.buffer_sizes_bytes[buffer]
        if size < required:
            yield finding(
                "L06",
                device,
                f"receive buffer {buffer} (priority {priority})",
                f"{size} B",
                f"smaller than the {required} B the mlx5 formula needs at"
                f" {format_value(port.speed_gbps)}G, {format_value(cable)} m",
                nic.origin_of("buffer_sizes_bytes"),
            )


def check_cable_length(ctx: LintContext) -> Iterator[LintFinding]:
    """L07: every PFC port has a cable length above 0 m (and within what the NIC accepts)."""
    for device in ctx.devices:
        if device.format not in CABLE_LENGTH_FORMATS:
            continue
        ports = [p for p in lossless_domain(device) if p.pfc_set or device.kind == "nic"]
        unset = [p for p in ports if not p.cable_length_m]
        for length, group in grouped(unset, lambda p: p.cable_length_m):
            yield finding(
                "L07",
                device,
                f"{port_list(group)} cable length",
                "0 m" if length == 0 else None,
                "headroom is sized for no cable",
                group[0].origin_of("cable_length_m") or group[0].origin_of("pfc_priorities"),
            )
        too_long = [
            p
            for p in ports
            if device.kind == "nic"
            and p.cable_length_m
            and p.cable_length_m > MLX5_MAX_CABLE_LENGTH_M
        ]
        for port in too_long:
            yield finding(
                "L07",
                device,
                f"{port.name} cable length",
                f"{format_value(port.cable_length_m)} m",
                f"longer than the {MLX5_MAX_CABLE_LENGTH_M} m the mlx5 driver accepts",
                port.origin_of("cable_length_m"),
            )
