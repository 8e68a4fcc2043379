"""The MTU chain (L08): host MTU >= RoCE MTU + 96 B; every switch port >= the host MTU.

Linux derives the RoCE path MTU from the netdev MTU minus the largest RoCE header stack (GRH 40
+ UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 = 96 B) and picks the largest of 4096, 2048,
1024, 512, 256 that fits (``iboe_get_mtu``, docs/refs.md C.5). All three switch formats and Linux
give the IP MTU (the L2 header is not counted), so switch and host MTUs compare directly.

>>> roce_mtu_for_netdev_mtu(4096), roce_mtu_for_netdev_mtu(4192), roce_mtu_for_netdev_mtu(1500)
(2048, 4096, 1024)
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

ROCE_HEADER_STACK_BYTES = 40 + 8 + 12 + 4 + 28 + 4
"""GRH + UDP + BTH + XRC + AtomicETH + ICRC (include/rdma/ib_pack.h), 96 B."""
ROCE_MTUS_BYTES = (4096, 2048, 1024, 512, 256)
"""IB MTU values a RoCE path can use (``iboe_get_mtu``)."""


def roce_mtu_for_netdev_mtu(netdev_mtu_bytes: int) -> int | None:
    """The RoCE MTU Linux picks for a netdev MTU, or ``None`` below 256 + 96 B."""
    for mtu in ROCE_MTUS_BYTES:
        if netdev_mtu_bytes - ROCE_HEADER_STACK_BYTES >= mtu:
            return mtu
    return None


def check_mtu(ctx: LintContext) -> Iterator[LintFinding]:
    """L08 on NICs, on switch ports, and between them."""
    needed = ctx.intent.roce_mtu_bytes + ROCE_HEADER_STACK_BYTES
    host_mtus = []
    for device in ctx.nics:
        port = device.ports[0]
        if port.mtu_bytes is None:
            continue
        host_mtus.append(port.mtu_bytes)
        if port.mtu_bytes < needed:
            yield finding(
                "L08",
                device,
                f"{port.name} mtu",
                port.mtu_bytes,
                f"RoCE MTU falls to {format_value(roce_mtu_for_netdev_mtu(port.mtu_bytes))}"
                f" (RoCE MTU {ctx.intent.roce_mtu_bytes} needs >= {needed})",
                port.origin_of("mtu_bytes"),
            )
    host_mtu = max(host_mtus, default=None)
    floor = max(needed, host_mtu or 0)
    for device in ctx.switches:
        low = [
            p for p in lossless_domain(device) if p.mtu_bytes is not None and p.mtu_bytes < floor
        ]
        for mtu, group in grouped(low, lambda p: p.mtu_bytes):
            what = (
                f"below the host MTU {host_mtu}: full-size frames are dropped"
                if host_mtu is not None and mtu is not None and mtu < host_mtu
                else f"cannot carry RoCE MTU {ctx.intent.roce_mtu_bytes} (needs >= {needed})"
            )
            yield finding(
                "L08",
                device,
                f"{port_list(group)} mtu",
                mtu,
                what,
                group[0].origin_of("mtu_bytes"),
            )
