"""The routed underlay of a RoCEv2 fabric: /31 per point-to-point link, loopbacks and eBGP ASNs.

Rules:

- every cable is a routed point-to-point link with a /31 (RFC 3021), the lower end (host or
  lower tier) on the even address; host links too, so a NIC's address tells its leaf;
- every switch has a /32 loopback;
- ASNs as RFC 7938 section 5.2 lays out a Clos fabric with eBGP: each leaf (Tier-3) its own ASN,
  the spines (Tier-2) of one cluster -- a pod at 3 tiers, the plane at 2 -- one shared ASN, the
  cores (Tier-1) of a plane one shared ASN; private 4-byte ASNs from 4200000000 (RFC 6996);
- BGP neighbours: both ends of every switch-to-switch link (hosts are connected routes);
- a scheduled (DDC) fabric routes as one system (OCP DDC: the leaves and fabric elements form
  one distributed router; its leaf-element links carry cells, not IP): /31s on the host links
  only, a loopback per leaf, one ASN per plane shared by its leaves, no loopback or address on
  a fabric element, and no BGP inside the fabric.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.export.cabling import cabling_plan
>>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"]}})
>>> rows = ip_plan_rows(cabling_plan(design_fabric(valid, "roce_v2"), valid))
>>> rows[1][:5]
['p2p', 'node-0001', 'nic0', '10.64.0.0/31', 'leaf-001']
"""

from __future__ import annotations

import csv
import io
import ipaddress

from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan

PRIVATE_ASN_FIRST = 4_200_000_000
PRIVATE_ASN_LAST = 4_294_967_294
"""Private-use 4-byte ASNs (RFC 6996)."""

DEFAULT_LOOPBACK_POOL = "10.0.0.0/16"
DEFAULT_P2P_POOL = "10.64.0.0/10"
"""Default pools (RFC 1918 space); ``--loopback-pool`` / ``--p2p-pool`` override them."""

IP_PLAN_COLUMNS = (
    "kind",
    "device",
    "interface",
    "address",
    "peer_device",
    "peer_interface",
    "peer_address",
    "local_asn",
    "peer_asn",
    "bgp_neighbor",
)


def _network(text: str, option: str) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(text, strict=True)
    except ValueError as exc:
        raise InputFileError(
            "FP1221", option, "not an IPv4 network", text, f"give e.g. 10.0.0.0/16 ({exc})"
        ) from None


def switch_asns(plan: CablingPlan) -> dict[str, int]:
    """ASN of every switch (RFC 7938: leaf each its own, spines per cluster, cores per plane)."""
    asns: dict[str, int] = {}
    next_asn = PRIVATE_ASN_FIRST
    shared: dict[tuple[str, int, int], int] = {}
    if plan.scheduled:  # one distributed router per plane
        for device in plan.devices_of("leaf"):
            key = ("leaf", device.plane, -1)
            if key not in shared:
                shared[key] = next_asn
                next_asn += 1
            asns[device.name] = shared[key]
        return asns
    for device in plan.devices:
        if device.role == "leaf":
            asns[device.name] = next_asn
            next_asn += 1
    for device in plan.devices:
        if device.role not in ("spine", "core"):
            continue
        cluster = device.pod if device.role == "spine" and plan.design.tiers == 3 else -1
        key = (device.role, device.plane, cluster)
        if key not in shared:
            shared[key] = next_asn
            next_asn += 1
        asns[device.name] = shared[key]
    if next_asn > PRIVATE_ASN_LAST:
        raise InputFileError(
            "FP1222",
            "ip-plan",
            "more switches than private ASNs",
            next_asn - PRIVATE_ASN_FIRST,
            "split the fabric into several BGP domains",
        )
    return asns


def ip_plan_rows(
    plan: CablingPlan,
    loopback_pool: str = DEFAULT_LOOPBACK_POOL,
    p2p_pool: str = DEFAULT_P2P_POOL,
) -> list[list[str]]:
    """Header, then one row per loopback and one per end of every point-to-point link.

    Raises
    ------
    InputFileError
        FP1221 for a pool that is not an IPv4 network, FP1223 when a pool is too small.
    """
    loopbacks = _network(loopback_pool, "--loopback-pool")
    p2p = _network(p2p_pool, "--p2p-pool")
    routed = ("leaf",) if plan.scheduled else ("leaf", "spine", "core")
    switches = [d for d in plan.devices if d.role in routed]
    links = [c for c in plan.cables if not (plan.scheduled and c.link_group == "leaf_spine")]
    if len(switches) + 1 > loopbacks.num_addresses:
        raise InputFileError(
            "FP1223",
            "--loopback-pool",
            f"too small for {len(switches)} loopbacks",
            loopback_pool,
            "give a larger network",
        )
    if 2 * len(links) > p2p.num_addresses:
        raise InputFileError(
            "FP1223",
            "--p2p-pool",
            f"too small for {len(links)} /31 links",
            p2p_pool,
            f"give at least a /{32 - (2 * len(links) - 1).bit_length()}",
        )
    asns = switch_asns(plan)
    rows: list[list[str]] = [list(IP_PLAN_COLUMNS)]
    base = int(p2p.network_address)
    for index, cable in enumerate(links):
        low = ipaddress.IPv4Address(base + 2 * index)
        high = ipaddress.IPv4Address(base + 2 * index + 1)
        a_asn = asns.get(cable.a_device)
        z_asn = asns.get(cable.z_device)
        bgp = "yes" if a_asn is not None and z_asn is not None else "no"
        for end, port, address, peer, peer_port, peer_address, asn, peer_asn in (
            (cable.a_device, cable.a_port, low, cable.z_device, cable.z_port, high, a_asn, z_asn),
            (cable.z_device, cable.z_port, high, cable.a_device, cable.a_port, low, z_asn, a_asn),
        ):
            rows.append(
                [
                    "p2p",
                    end,
                    port,
                    f"{address}/31",
                    peer,
                    peer_port,
                    str(peer_address),
                    "" if asn is None else str(asn),
                    "" if peer_asn is None else str(peer_asn),
                    bgp,
                ]
            )
    first = int(loopbacks.network_address)
    for index, device in enumerate(switches):
        address = ipaddress.IPv4Address(first + index + 1)  # skip the network address
        rows.append(
            [
                "loopback",
                device.name,
                "lo",
                f"{address}/32",
                "",
                "",
                "",
                str(asns[device.name]),
                "",
                "no",
            ]
        )
    return rows


def ip_plan_csv(
    plan: CablingPlan,
    loopback_pool: str = DEFAULT_LOOPBACK_POOL,
    p2p_pool: str = DEFAULT_P2P_POOL,
) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(ip_plan_rows(plan, loopback_pool, p2p_pool))
    return out.getvalue()
