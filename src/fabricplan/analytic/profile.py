"""Everything the analytic models read about one fabric, gathered once.

A :class:`FabricProfile` holds the hardware figures of one technology (from the
:class:`~fabricplan.model.scenario.ValidScenario`, with any calibration applied) and the geometry
of its :class:`~fabricplan.model.fabric.FabricDesign` reduced to a few numbers: how many nodes share
a leaf (for one rail) and a pod, how many uplinks a leaf and a spine have, which cables a path
crosses. Every model in this package is a closed form over these numbers, so a 100k-GPU fabric
costs no more than a 16-GPU one.

Link goodput follows from the technology's packet format: a link of ``speed`` carries
``speed * mtu / (mtu + header_bytes)`` of payload, where ``header_bytes`` counts every byte a
packet puts on the wire beyond its payload (IBTA Vol. 1 for InfiniBand; IEEE 802.3 framing plus
IPv4/UDP/BTH/ICRC for RoCEv2) — see :func:`goodput_gbps`.

>>> round(goodput_gbps(400, 4096, 26), 2)    # NDR InfiniBand
397.48
>>> round(goodput_gbps(400, 4096, 82), 2)    # 400GbE RoCEv2
392.15
>>> wire_bytes(8192, 4096, 26)               # two packets
8244

A scheduled fabric (DDC) cuts every frame into cells on its fabric links, each with its own
header (:func:`cell_wire_bytes`); the ingress leaf asks the egress for credit before the first
cell leaves (:func:`scheduled_fabric_ns`).

>>> cell_wire_bytes(4158, 256, 16)           # a 4096 B RoCE frame: 17 cells of <= 256 B
4430
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.analytic.nccl_tuning import (
    DEFAULT_NCCL_VERSION,
    NcclTuning,
    nccl_release_key,
    nccl_tuning,
)
from fabricplan.analytic.symmetric_kernel import release_has_symmetric_kernels
from fabricplan.errors import ModelError
from fabricplan.model.fabric import FabricDesign, LinkGroupName
from fabricplan.model.hardware import (
    CongestionControlName,
    DeliveryName,
    LinkFlowControlName,
    NodeSpec,
    PcieLinkSpec,
    TechnologyRoutingName,
    TechnologySpec,
)
from fabricplan.model.load_balancing import AdaptiveGranularity, adaptive_routing_for_asic
from fabricplan.model.results import CalibrationProfile, PerfRequest
from fabricplan.model.scenario import ValidScenario
from fabricplan.units import gbps_to_GBps, serialization_ns

DEFAULT_NIC_BW_EFFICIENCY = 1.0
"""Share of the payload goodput a NIC achieves on a large transfer. The wire is the bound: a
ConnectX RoCE NIC at 100 GbE with a 1024 B path MTU measures 92.4 Gb/s in ``ib_write_bw``
(NVIDIA GPU Operator docs, GPUDirect RDMA example), within 0.2 % of ``100 * 1024 / (1024 + 82)``."""

DEFAULT_NVLINK_BW_EFFICIENCY = 0.865
"""Share of the NVLink line rate NCCL's data movement reaches, before the protocol efficiency.
NCCL maintainers: ring busbw over NVLink 4 is ~370 GB/s of the 450 GB/s line rate (NVIDIA/nccl-tests
#212, NVIDIA/nccl #1442) = 0.822 = this share x :data:`DEFAULT_COLLECTIVE_EFFICIENCY` (0.95)."""

PCIE_MAX_PAYLOAD_BYTES = 256
"""Largest data payload of one PCIe transaction (Max_Payload_Size): 256 B is what server root
complexes and PCIe switches negotiate with NICs and GPUs (PCI Express Base Specification, Device
Control register; 128-4096 B allowed, the smallest MPS on the path wins)."""
PCIE_TLP_OVERHEAD_BYTES = 24
"""Bytes a PCIe Gen3+ link spends per memory-write TLP besides its payload: a 4-byte STP framing
token (with the sequence number), a 16-byte header (4 DW, 64-bit address) and a 4-byte LCRC (PCI
Express Base Specification 3.0-5.0: framing tokens, TLP header formats, LCRC). Read completions
carry a 12-byte header (20 bytes in all); the writes of the receiving side are the tighter bound.
DLLPs (acks, flow-control updates) are not counted."""

PCIE_TRANSFER_RATE_GT_PER_LANE: dict[int, float] = {
    1: 2.5,
    2: 5.0,
    3: 8.0,
    4: 16.0,
    5: 32.0,
    6: 64.0,
}
"""Transfer rate of one PCIe lane per generation, GT/s (PCI Express Base Specification 1.0-6.0)."""
PCIE_ENCODING_EFFICIENCY: dict[int, float] = {
    1: 8 / 10,
    2: 8 / 10,
    3: 128 / 130,
    4: 128 / 130,
    5: 128 / 130,
    6: 236 / 256,
}
"""Data share of the line after coding: 8b/10b (Gen1-2), 128b/130b (Gen3-5), and for Gen6's
256-byte FLITs 236 TLP bytes (6 DLP, 8 CRC, 6 FEC bytes) (PCI Express Base Specification)."""

ETHERNET_PREAMBLE_AND_GAP_BYTES = 20
"""Bytes an Ethernet frame spends on the wire outside the frame itself: preamble and SFD (8) and
the minimum inter-frame gap (12) (IEEE 802.3 clause 4). A cell fabric carries the frame, not
these: a scheduled fabric's cells hold ``header_bytes - 20`` of headers per packet."""

VOQ_SCHEDULER_DECISION_NS = 100.0
"""Time the egress scheduler of a VOQ fabric takes to turn a request into a grant, ns (estimate:
a pipeline of a few tens of clock cycles at ~1 GHz; Broadcom publishes no figure for the
Jericho3-AI credit scheduler)."""

DEFAULT_COLLECTIVE_EFFICIENCY = 0.95
"""Share of the algorithm's bandwidth bound NCCL's Simple protocol reaches on large messages.
NCCL maintainers: 46-48 GB/s busbw per NDR 400G NIC (NVIDIA/nccl-tests #290; goodput 49.7 GB/s)
and 192 GB/s on 8 x HDR 200G (NVIDIA/nccl #812; goodput 198.7 GB/s): 0.95 and 0.97."""


@dataclass(frozen=True, slots=True)
class FabricProfile:
    """One technology's fabric as the analytic models see it (all figures calibrated)."""

    technology: str
    nic_latency_ns: float
    """One adapter's latency (each end of a transfer pays it once)."""
    switch_latency_ns: float
    """One switch hop, port to port (cut-through)."""
    link_speed_gbps: float
    """Host link signalling rate (the slower of NIC and switch port)."""
    port_speed_gbps: float
    """Switch-to-switch link rate."""
    mtu_bytes: int
    header_bytes: float
    nic_goodput_GBps: float  # noqa: N815 - GB/s
    """Payload rate of one NIC on a large transfer, GB/s: the lower of the link's goodput (headers,
    NIC efficiency) and the host interface's (:func:`host_goodput_gbps`)."""
    nic_bw_efficiency: float
    """Share of the link's payload goodput the NIC reaches (default or calibrated)."""
    host_goodput_gbps: float | None
    """Payload the NIC's host interface (PCIe) carries, Gb/s; ``None`` when the catalog does not
    give the interface."""
    routing: TechnologyRoutingName
    """The routing in use: the technology's default or the one asked for."""
    in_network_reduction: bool
    """SHARP-style reduction in use: technology and switch capable, and the request allows it."""
    nvlink_GBps: float  # noqa: N815 - GB/s
    """NVLink bandwidth one GPU moves per direction through NCCL (efficiency applied)."""
    nvls: bool
    gpus_per_node: int
    nics_per_node: int
    nvlink_domain_gpus: int
    nodes: int
    tiers: int
    nodes_per_leaf: float
    """Nodes whose same-rail NIC ports share one leaf."""
    nodes_per_pod: float
    """Nodes reachable without crossing the core (all nodes at two tiers)."""
    ports_per_leaf_per_node: float
    """NIC ports one node has on one leaf (1 when rail-aligned)."""
    hosts_per_leaf: int
    leaf_up_ports: int
    spine_down_ports: int
    spine_up_ports: int
    cable_ns: tuple[float, float, float]
    """Propagation through one node-leaf, leaf-spine and spine-core cable, ns."""
    dense_tflops: float
    """Dense BF16 tensor throughput per GPU, TFLOP/s."""
    gpu_class: str | None
    """NCCL's compute-capability class of the GPU (:func:`nccl_gpu_class`)."""
    collective_efficiency: float
    step_software_us: float | None
    """Calibrated software cost per collective step; ``None`` keeps NCCL's tuning constants."""
    nccl: NcclTuning
    """NCCL's tuning tables for the spec's ``nccl.version``."""
    gpu_nic_path: str
    """NCCL path type from a GPU to its closest NIC (``pix`` ... ``sys``)."""
    cpu_vendor: str
    """The hosts' CPU as NCCL detects it (``intel``, ``amd``, ``arm``; ``cluster.host``)."""
    rank_nics_per_node: float
    """NICs the node's ranks use: those on their own PCIe switches (NCCL picks the closest
    NICs), so one GPU of an 8-GPU server uses its switch's NICs, not all of them."""
    notes: tuple[str, ...] = ()
    nccl_release: tuple[int, int, int] = nccl_release_key(DEFAULT_NCCL_VERSION)
    """The spec's ``nccl.version`` as ``(major, minor, patch)``."""
    symmetric_memory: bool = False
    """Buffers are registered as symmetric windows (``nccl.symmetric_memory``) and the release
    has symmetric kernels (2.27+): one NVLink domain's collectives run them
    (:mod:`.symmetric_kernel`)."""
    qps_per_connection: int = 1
    """Queue pairs per NCCL connection (``nccl.qps_per_connection``): each is hashed onto its
    own path by ECMP (its own UDP source port), so more QPs spread a NIC's traffic."""
    delivery: DeliveryName = "in_order"
    """What the receiving NIC accepts (``in_order``: an overtaking packet is a loss)."""
    adaptive_granularity: AdaptiveGranularity = "per_packet"
    """What the switch's adaptive routing places (:mod:`fabricplan.model.load_balancing`)."""
    fabric_reassembles: bool = False
    """The fabric delivers whole packets in order whatever path their pieces took (a cell fabric
    reassembles at the egress leaf), so spraying needs nothing of the NIC."""
    fabric_payload_share: float | None = None
    """Payload share of a fabric (leaf-up) link when it carries cells, not packets
    (:func:`cell_payload_share`); ``None``: the same packets as the host links."""
    fabric_crossing_ns: float = 0.0
    """Extra one-way time of a message through the fabric: the request/grant round trip and the
    store and reassembly of one packet (:func:`scheduled_fabric_ns`)."""
    link_flow_control: LinkFlowControlName = "credit"
    """The technology's link-level flow control (how congestion reaches other traffic)."""
    congestion_control: CongestionControlName = "ib_cc"
    """The technology's end-to-end rate control (how fast an incast is slowed)."""
    fabric_request_grant_ns: float = 0.0
    """The request/grant round trip alone, of a scheduled fabric (0 for the others)."""
    spine_latency_ns: float | None = None
    """Port-to-port latency of the spine hop when the spine is another kind of switch than the
    leaf (a scheduled fabric's fabric element); ``None``: the leaf's."""
    frame_error_ratio: float = 0.0
    """Share of frames each link corrupts (``fabric.frame_error_ratio``; priced by
    :mod:`.link_error`)."""
    link_level_retry: bool = False
    """The links replay a corrupted frame themselves (``fabric.uec.link_level_retry``)."""
    worst_case_switch_hops: int = 1
    """The design's longest path in switches (the path every frame is counted over by
    :mod:`.link_error`)."""

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


def pcie_link_gbps(link: PcieLinkSpec) -> float:
    """Data rate of a PCIe link after line coding, Gb/s.

    >>> round(pcie_link_gbps(PcieLinkSpec(generation=3, lanes=8)), 2)   # below a 100G port
    63.02
    >>> round(pcie_link_gbps(PcieLinkSpec(generation=4, lanes=16)), 2)
    252.06
    """
    rate = PCIE_TRANSFER_RATE_GT_PER_LANE[link.generation]
    return rate * link.lanes * PCIE_ENCODING_EFFICIENCY[link.generation]


def nvlink_domain_gpus(node: NodeSpec, gpus_per_node: int, deployed_gpus: int | None = None) -> int:
    """GPUs of one NVLink domain when each server holds ``gpus_per_node`` of the job's GPUs.

    A domain spans ``node.nvlink_domain_gpus / node.gpus_per_node`` servers: one for an HGX
    board (its NVSwitches are inside the server), 18 compute trays for a GB200 NVL72. Two
    HGX servers are two domains however few of their GPUs a job uses. ``deployed_gpus``
    (``cluster.host.nvlink_domain_gpus``) is the domain as built, where racks hold fewer trays.

    >>> from fabricplan.catalog.loader import load_catalog
    >>> catalog = load_catalog()
    >>> nvlink_domain_gpus(catalog.get_typed("h100", NodeSpec, "x"), 1)
    1
    >>> nvlink_domain_gpus(catalog.get_typed("gb200-nvl72", NodeSpec, "x"), 4)
    72
    >>> nvlink_domain_gpus(catalog.get_typed("gb200-nvl72", NodeSpec, "x"), 4, 64)  # 16 trays
    64
    """
    domain = node.nvlink_domain_gpus if deployed_gpus is None else deployed_gpus
    if domain % node.gpus_per_node:
        return gpus_per_node
    return domain // node.gpus_per_node * gpus_per_node


def rank_nics_per_node(node: NodeSpec, gpus_per_node: int, nics_per_node: int) -> float:
    """NICs the ranks of one server use: the NICs on the PCIe switches of the GPUs they run on.

    GPUs are taken in order (GPU 0, 1, ...), so ``gpus_per_node`` of them sit on
    ``ceil(gpus_per_node / gpus per switch)`` switches; each switch carries
    ``nics_per_node / pcie_switches`` NICs (at least one: NCCL always finds a NIC). A node with
    no PCIe switch data, or a job on all its GPUs, uses every NIC.

    >>> from fabricplan.catalog.loader import load_catalog
    >>> h100 = load_catalog().get_typed("h100", NodeSpec, "x")
    >>> rank_nics_per_node(h100, 1, 4), rank_nics_per_node(h100, 8, 8)
    (1.0, 8.0)
    """
    if node.pcie_switches is None or gpus_per_node >= node.gpus_per_node:
        return float(nics_per_node)
    switches = min(node.pcie_switches, node.gpus_per_node)
    gpus_per_switch = node.gpus_per_node / switches
    used = math.ceil(gpus_per_node / gpus_per_switch - 1e-9)
    return min(float(nics_per_node), max(1.0, used * nics_per_node / switches))


def goodput_gbps(speed_gbps: float, mtu_bytes: int, header_bytes: float) -> float:
    """Payload rate of a link carrying full-MTU packets: ``speed * mtu / (mtu + header)``.

    >>> goodput_gbps(100, 1024, 82) < 92.6
    True
    """
    return speed_gbps * mtu_bytes / (mtu_bytes + header_bytes)


def host_goodput_gbps(host_interface_gbps: float) -> float:
    """Payload rate of a PCIe link: ``rate * MPS / (MPS + TLP overhead)``.

    >>> round(host_goodput_gbps(252.06), 1)   # PCIe Gen4 x16: 256 / (256 + 24)
    230.5
    """
    return (
        host_interface_gbps
        * PCIE_MAX_PAYLOAD_BYTES
        / (PCIE_MAX_PAYLOAD_BYTES + PCIE_TLP_OVERHEAD_BYTES)
    )


NCCL_GPU_CLASS_BY_PREFIX: dict[str, str] = {
    "V": "volta",
    "A": "ampere",
    "L": "ampere",
    "H": "hopper",
    "GH": "hopper",
    "B": "blackwell",
    "GB": "blackwell",
}
"""NCCL tunes by compute-capability class (``tuning.cc``: >= 10.0 Blackwell, >= 9.0 Hopper, >= 8.0
Ampere, else Volta); NVIDIA data-centre GPU names start with their architecture's letter (V100,
A100, L40S = Ada, sm_89, which NCCL counts as Ampere; H100/H20/GH200; B200/GB200/B300)."""


def nccl_gpu_class(gpu_name: str) -> str | None:
    """NCCL's tuning class of a GPU from its catalog name; ``None`` when the name says nothing.

    >>> nccl_gpu_class("H100 SXM5"), nccl_gpu_class("GB200"), nccl_gpu_class("MI300X")
    ('hopper', 'blackwell', None)
    """
    name = gpu_name.strip().upper()
    for prefix in sorted(NCCL_GPU_CLASS_BY_PREFIX, key=len, reverse=True):
        rest = name[len(prefix) :]
        if name.startswith(prefix) and rest[:1].isdigit():
            return NCCL_GPU_CLASS_BY_PREFIX[prefix]
    return None


def wire_bytes(size_bytes: float, mtu_bytes: int, header_bytes: float) -> float:
    """Bytes a message of ``size_bytes`` puts on the wire: payload plus one header per packet.

    >>> wire_bytes(2, 4096, 82)
    84
    """
    packets = max(1, math.ceil(size_bytes / mtu_bytes))
    return size_bytes + packets * header_bytes


def cell_wire_bytes(frame_bytes: float, cell_bytes: float, cell_header_bytes: float) -> float:
    """Bytes one frame takes on a cell fabric's link: the frame cut into ``ceil(frame / cell)``
    cells of at most ``cell_bytes`` (the last one shorter), each with its own header.

    >>> cell_wire_bytes(64, 256, 16), cell_wire_bytes(257, 256, 16)   # 1 cell; 2 cells
    (80, 289)
    """
    cells = max(1, math.ceil(frame_bytes / cell_bytes))
    return frame_bytes + cells * cell_header_bytes


def cell_payload_share(tech: TechnologySpec) -> float | None:
    """Payload share of a cell fabric's link for full-MTU packets; ``None`` without cells.

    The frame a leaf cuts into cells is the payload plus its headers, without the Ethernet
    preamble and inter-frame gap (:data:`ETHERNET_PREAMBLE_AND_GAP_BYTES`).

    >>> from fabricplan.catalog.loader import load_catalog
    >>> ddc = load_catalog().get_typed("ddc", TechnologySpec, "x")
    >>> round(cell_payload_share(ddc), 4)   # 4096 B in 17 cells of 256 B + 16 B
    0.9246
    """
    if tech.cell_bytes is None or tech.cell_header_bytes is None:
        return None
    frame = tech.mtu_bytes + tech.header_bytes.value - ETHERNET_PREAMBLE_AND_GAP_BYTES
    return tech.mtu_bytes / cell_wire_bytes(
        frame, tech.cell_bytes.value, tech.cell_header_bytes.value
    )


def request_grant_ns(
    tech: TechnologySpec, switch_latency_ns: float, leaf_spine_cable_ns: float
) -> float:
    """A VOQ fabric's request/grant round trip through one fabric element, ns; 0 for others.

    >>> from fabricplan.catalog.loader import load_catalog
    >>> ddc = load_catalog().get_typed("ddc", TechnologySpec, "x")
    >>> request_grant_ns(ddc, 600.0, 49.0)   # 2 x (2 x 49 + 600) + 100
    1496.0
    """
    if tech.link_flow_control != "scheduled":
        return 0.0
    return 2 * (2 * leaf_spine_cable_ns + switch_latency_ns) + VOQ_SCHEDULER_DECISION_NS


def scheduled_fabric_ns(
    tech: TechnologySpec,
    switch_latency_ns: float,
    leaf_spine_cable_ns: float,
    link_speed_gbps: float,
    port_speed_gbps: float,
) -> float:
    """Extra one-way time a message pays crossing a scheduled (VOQ) fabric, ns; 0 for others.

    Before the first cell leaves, the ingress leaf sends a request to the egress port's
    scheduler and waits for its credit grant: a round trip through a fabric element
    (``2 x (2 cables + fabric element)`` plus :data:`VOQ_SCHEDULER_DECISION_NS`;
    ``switch_latency_ns`` is the fabric element's). The ingress
    leaf holds the whole packet in its VOQ (one packet at the host link rate) and the egress
    leaf reassembles the cells before the packet leaves (one packet's cells at the fabric link
    rate): two store-and-forward stages a cut-through switch does not have.

    >>> from fabricplan.catalog.loader import load_catalog
    >>> ddc = load_catalog().get_typed("ddc", TechnologySpec, "x")
    >>> round(scheduled_fabric_ns(ddc, 600.0, 49.0, 400.0, 400.0), 1)  # 1496 + 83.6 + 88.6
    1668.2
    """
    if tech.link_flow_control != "scheduled":
        return 0.0
    request_grant = request_grant_ns(tech, switch_latency_ns, leaf_spine_cable_ns)
    ingress = serialization_ns(tech.mtu_bytes + tech.header_bytes.value, link_speed_gbps)
    share = cell_payload_share(tech) or 1.0
    egress = serialization_ns(tech.mtu_bytes / share, port_speed_gbps)
    return request_grant + ingress + egress


def switch_hops_cables(switch_hops: int) -> tuple[int, int, int]:
    """Cables of each class a path through ``switch_hops`` switches crosses (up, then down).

    >>> switch_hops_cables(1), switch_hops_cables(3), switch_hops_cables(5)
    ((2, 0, 0), (2, 2, 0), (2, 2, 2))
    """
    if switch_hops <= 0:
        return (1, 0, 0)  # back to back
    return (2, 2 if switch_hops >= 3 else 0, 2 if switch_hops >= 5 else 0)


def path_latency_ns(profile: FabricProfile, switch_hops: int, size_bytes: float) -> float:
    """One-way time for a message from one NIC to another through ``switch_hops`` switches.

    ``2 * nic + hops * switch + propagation + serialization``: the sender's and the receiver's
    adapter, every switch port to port (cut-through, so a packet is serialised once, at the host
    link, not at every hop), the cables, and the message's wire bytes (payload plus per-packet
    headers) at the host link rate.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> round(path_latency_ns(profile, 1, 2), 2)   # 2 x 350 + 130 + 2 x 3 m x 4.9 + 28 B at 400G
    859.96
    """
    cables = switch_hops_cables(switch_hops)
    propagation = sum(n * ns for n, ns in zip(cables, profile.cable_ns, strict=True))
    wire = wire_bytes(size_bytes, profile.mtu_bytes, profile.header_bytes)
    fabric = profile.fabric_crossing_ns if switch_hops >= 3 else 0.0
    spine = profile.spine_latency_ns
    if spine is not None and switch_hops >= 3:  # one hop of a leaf-spine-leaf path is the spine
        fabric += spine - profile.switch_latency_ns
    return (
        2 * profile.nic_latency_ns
        + max(0, switch_hops) * profile.switch_latency_ns
        + propagation
        + serialization_ns(wire, profile.link_speed_gbps)
        + fabric
    )


def _effective_routing(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest
) -> tuple[TechnologyRoutingName, tuple[str, ...]]:
    tech = valid.technologies[design.technology]
    switch = valid.switches[design.technology]
    can_adapt = tech.adaptive_routing_available and switch.adaptive_routing
    asked = request.routing.get(design.technology) or valid.spec.fabric.routing.get(
        design.technology
    )
    if asked == "adaptive" and not can_adapt:
        raise ModelError(
            "FP508",
            f"routing.{design.technology}",
            f"adaptive routing is not available with {switch.id} for {design.technology}",
            asked,
            "use ecmp or static, or choose a switch with adaptive routing",
        )
    if asked is not None:
        return asked, (f"routing: {asked} (asked for; the {tech.id} default is {tech.routing})",)
    if tech.routing == "adaptive" and not can_adapt:
        return "static", (
            f"routing: static — {switch.id} has no adaptive routing, so the {tech.id} default"
            " (adaptive) falls back to static routes",
        )
    return tech.routing, (f"routing: {tech.routing} (the {tech.id} default)",)


def _mechanism_notes(
    tech: TechnologySpec,
    routing: str,
    granularity: str,
    payload_share: float | None,
    fabric_ns: float,
    switch_trims: bool = True,
) -> tuple[str, ...]:
    """What the analytic model makes of the technology's mechanisms, in words."""
    notes: list[str] = []
    per_packet = routing == "spray" or (routing == "adaptive" and granularity == "per_packet")
    if routing in ("flowlet",) or (routing == "adaptive" and granularity == "flowlet"):
        notes.append(
            "flowlet routing: a long-lived NCCL flow has no idle gap longer than the flowlet"
            " timeout, so it is placed once and collides like an ECMP flow"
        )
    elif per_packet:
        how = (
            "cells are reassembled in order at the egress leaf"
            if tech.cell_bytes
            else (f"receiver delivery {tech.delivery}")
        )
        cost = (
            "go-back-N on every overtaking packet"
            if tech.delivery == "in_order" and tech.cell_bytes is None
            else "no reordering cost"
        )
        notes.append(f"{routing} per packet: no hash collisions; {how}: {cost}")
    if payload_share is not None:
        notes.append(
            f"cell fabric: {payload_share:.1%} of a fabric link carries payload (cells of"
            f" {tech.cell_bytes.value if tech.cell_bytes else 0:g} B +"
            f" {tech.cell_header_bytes.value if tech.cell_header_bytes else 0:g} B header)"
        )
    if fabric_ns:
        notes.append(
            f"scheduled fabric: request/grant round trip and VOQ store + egress reassembly add"
            f" {fabric_ns:.0f} ns to each message through the fabric; lossless by scheduling,"
            " no PFC"
        )
    if tech.link_flow_control == "credit" and tech.switch_family == "ethernet":
        notes.append(
            "credit-based flow control (CBFC, fabric.uec): a link sends only into buffer the"
            " next hop granted, so no queue overflows and nothing is trimmed or dropped; a"
            " congested egress holds its upstream queues, as InfiniBand credits do"
        )
    elif tech.packet_trimming and switch_trims:
        notes.append(
            "packet trimming: an overflow costs a header and a NACK-driven resend one round trip"
            " later, not a retransmission timeout"
        )
    if tech.link_level_retry:
        notes.append(
            "link-level retry (LLR, fabric.uec): a frame corrupted on a link is replayed by that"
            " link one link round trip later; the transport never sees the loss"
            " (fabric.frame_error_ratio prices it)"
        )
    return tuple(notes)


def _in_network_reduction(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest
) -> tuple[bool, tuple[str, ...]]:
    """Whether collectives may reduce in the switches (SHARP), and the note saying why."""
    tech = valid.technologies[design.technology]
    switch = valid.switches[design.technology]
    capable = tech.in_network_reduction and switch.in_network_reduction
    asked = request.in_network_reduction
    if asked and not capable:
        raise ModelError(
            "FP513",
            "in_network_reduction",
            f"{switch.id} with {tech.id} has no in-network reduction",
            asked,
            "leave in_network_reduction unset or false, or choose a switch with SHARP",
        )
    if not capable:
        return False, ()
    if asked is None:
        mode = valid.spec.fabric.sharp_for(design.technology)
        if mode == "on":
            return True, (
                f"in-network reduction: on (fabric.sharp; {switch.id} has SHARP: CollNet with"
                " the SHARP plugin and aggregation manager, NCCL_COLLNET_ENABLE=1); SHARP busbw"
                " unvalidated beyond CollNetChain on 64 GPUs (docs/validation.md); NVLS with SHARP"
                " across nodes matches no published multi-node run, and above 480 GB/s it exceeds"
                " NVLS's own intra-node peak on 8 H100 (NVIDIA/nccl-tests #212)",
            )
        return False, (
            f"in-network reduction: CollNet off (fabric.sharp: {mode}; what NCCL does without"
            " the SHARP plugin); NVLS and NVLSTree as NCCL picks them",
        )
    return asked, (f"in-network reduction: {'on' if asked else 'off'} (asked for)",)


def _cable_ns_per_m(valid: ValidScenario, design: FabricDesign, group: LinkGroupName) -> float:
    by_id = {cable.id: cable.ns_per_m.value for cable in valid.cables}
    for link in design.link_groups:
        if link.name == group and link.cable_id in by_id:
            return by_id[link.cable_id]
    # No cable chosen for this tier: take the slowest medium in the catalog (an upper bound).
    return max(by_id.values(), default=5.0)


def _nodes_per_leaf(design: FabricDesign, ports_per_node: float) -> tuple[float, float]:
    """(nodes whose same-rail ports share a leaf, ports one node has on one leaf)."""
    if design.tiers == 1 and not design.tier("spine"):
        return float(design.nodes), ports_per_node
    if design.rail_aligned:
        return float(max(1, design.hosts_per_leaf)), 1.0
    on_leaf = min(ports_per_node, float(design.hosts_per_leaf))
    return max(1.0, design.hosts_per_leaf / ports_per_node), on_leaf


def _nodes_per_pod(design: FabricDesign, nodes_per_leaf: float, ports_per_node: float) -> float:
    if design.tiers < 3:
        return float(design.nodes)
    if design.rail_aligned:
        rails_per_group = max(1.0, ports_per_node / design.spine_groups)
        units_per_pod = max(1.0, design.leaves_per_pod / rails_per_group)
        pod = units_per_pod * design.hosts_per_leaf
    else:
        pod = design.leaves_per_pod * nodes_per_leaf
    return min(float(design.nodes), max(nodes_per_leaf, pod))


def fabric_profile(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest | None = None
) -> FabricProfile:
    """Gather one fabric's figures and geometry, with the request's calibration and routing.

    Parameters
    ----------
    valid
        The resolved scenario (hardware figures come only from here).
    design
        The technology's designed fabric.
    request
        Calibration and routing overrides; ``None`` keeps every default.

    Returns
    -------
    FabricProfile

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> valid = parse_spec({"cluster": {"gpus": 1024}})
    >>> profile = fabric_profile(valid, design_fabric(valid, "infiniband"))
    >>> profile.nodes_per_leaf, profile.routing, round(profile.nic_goodput_GBps, 2)
    (32.0, 'adaptive', 49.68)
    """
    request = request or PerfRequest()
    calibration = request.calibration or CalibrationProfile()
    tech_name = design.technology
    tech = valid.technologies[tech_name]
    nic = valid.nics[tech_name]
    switch = valid.switches[tech_name]
    cluster = valid.spec.cluster
    node = valid.node

    link_speed = min(cluster.nic_speed_gbps, design.port_speed_gbps)
    header = tech.header_bytes.value
    nic_efficiency = calibration.nic_bw_efficiency or DEFAULT_NIC_BW_EFFICIENCY
    goodput = gbps_to_GBps(goodput_gbps(link_speed, tech.mtu_bytes, header)) * nic_efficiency
    host = None if nic.host_interface_gbps is None else nic.host_interface_gbps.value
    slot = cluster.host.nic_slot or node.nic_slot
    if slot is not None:  # the NIC runs at the slower of its own interface and its slot
        host = pcie_link_gbps(slot) if host is None else min(host, pcie_link_gbps(slot))
    host_goodput = None if host is None else host_goodput_gbps(host)
    if host_goodput is not None:
        goodput = min(goodput, gbps_to_GBps(host_goodput))
    nvlink_efficiency = calibration.nvlink_bw_efficiency or DEFAULT_NVLINK_BW_EFFICIENCY
    domain = nvlink_domain_gpus(node, cluster.gpus_per_node, cluster.host.nvlink_domain_gpus)
    routing, routing_notes = _effective_routing(valid, design, request)

    ports_per_node = cluster.nics_per_node / design.planes
    nodes_per_leaf, ports_on_leaf = _nodes_per_leaf(design, ports_per_node)
    nodes_per_pod = _nodes_per_pod(design, nodes_per_leaf, ports_per_node)
    leaf = design.tier("leaf")
    spine = design.tier("spine")
    reach = valid.spec.fabric.cable_reach
    cable_ns = (
        reach.node_leaf_m * _cable_ns_per_m(valid, design, "node_leaf"),
        reach.leaf_spine_m * _cable_ns_per_m(valid, design, "leaf_spine"),
        reach.spine_core_m * _cable_ns_per_m(valid, design, "spine_core"),
    )
    sharp, sharp_notes = _in_network_reduction(valid, design, request)
    switch_latency = calibration.switch_latency_ns or switch.latency_ns.value
    element = valid.fabric_elements.get(tech_name)
    spine_latency = None if element is None else element.latency_ns.value
    fabric_ns = scheduled_fabric_ns(
        tech, spine_latency or switch_latency, cable_ns[1], link_speed, design.port_speed_gbps
    )
    tuning = nccl_tuning(valid.spec.nccl.version)
    nccl_note = (
        f"NCCL {valid.spec.nccl.version}: tuning tables of the {tuning.line} line"
        f" ({tuning.covers}; src/graph/tuning.cc @ {tuning.tag})"
    )
    release = nccl_release_key(valid.spec.nccl.version)
    symmetric = valid.spec.nccl.symmetric_memory and release_has_symmetric_kernels(release)
    symmetric_notes: tuple[str, ...] = ()
    if valid.spec.nccl.symmetric_memory:
        symmetric_notes = (
            (
                "nccl.symmetric_memory: all_reduce, all_gather and reduce_scatter within one"
                " NVLink domain run NCCL's symmetric kernels at NCCL's own estimate"
                " (src/symmetric.cc @ v2.27.3-1, src/sym_kernels.cc @ v2.30.7-1)",
            )
            if symmetric
            else (
                f"nccl.symmetric_memory: ignored, NCCL {valid.spec.nccl.version} has no"
                " symmetric kernels (they came in 2.27)",
            )
        )
    return FabricProfile(
        technology=tech_name,
        nic_latency_ns=calibration.nic_latency_ns or nic.latency_ns.value,
        switch_latency_ns=switch_latency,
        link_speed_gbps=link_speed,
        port_speed_gbps=design.port_speed_gbps,
        mtu_bytes=tech.mtu_bytes,
        header_bytes=header,
        nic_goodput_GBps=goodput,
        nic_bw_efficiency=nic_efficiency,
        host_goodput_gbps=host_goodput,
        routing=routing,
        in_network_reduction=sharp,
        nvlink_GBps=node.nvlink_GBps.value * nvlink_efficiency,
        nvls=node.nvls and valid.spec.nccl.nvls_enable,
        gpus_per_node=cluster.gpus_per_node,
        nics_per_node=cluster.nics_per_node,
        nvlink_domain_gpus=domain,
        nodes=cluster.nodes,
        tiers=design.tiers,
        nodes_per_leaf=nodes_per_leaf,
        nodes_per_pod=nodes_per_pod,
        ports_per_leaf_per_node=ports_on_leaf,
        hosts_per_leaf=design.hosts_per_leaf,
        leaf_up_ports=leaf.up_ports if leaf else 0,
        spine_down_ports=spine.down_ports if spine else 0,
        spine_up_ports=spine.up_ports if spine else 0,
        cable_ns=cable_ns,
        dense_tflops=node.dense_bf16_tflops.value,
        gpu_class=nccl_gpu_class(node.gpu),
        collective_efficiency=calibration.collective_efficiency or DEFAULT_COLLECTIVE_EFFICIENCY,
        step_software_us=calibration.collective_latency_us,
        nccl=tuning,
        nccl_release=release,
        symmetric_memory=symmetric,
        gpu_nic_path=cluster.host.gpu_nic_path or node.gpu_nic_path,
        cpu_vendor=cluster.host.cpu_vendor,
        rank_nics_per_node=rank_nics_per_node(node, cluster.gpus_per_node, cluster.nics_per_node),
        notes=(
            *routing_notes,
            *_mechanism_notes(
                tech,
                routing,
                adaptive_routing_for_asic(switch.asic).granularity,
                cell_payload_share(tech),
                fabric_ns,
                switch.packet_trimming,
            ),
            *sharp_notes,
            nccl_note,
            *symmetric_notes,
        ),
        qps_per_connection=valid.spec.nccl.qps_per_connection or 1,
        delivery=tech.delivery,
        adaptive_granularity=adaptive_routing_for_asic(switch.asic).granularity,
        fabric_reassembles=tech.cell_bytes is not None,
        fabric_payload_share=cell_payload_share(tech),
        fabric_crossing_ns=fabric_ns,
        link_flow_control=tech.link_flow_control,
        congestion_control=tech.congestion_control,
        fabric_request_grant_ns=request_grant_ns(
            tech, spine_latency or switch_latency, cable_ns[1]
        ),
        spine_latency_ns=spine_latency,
        frame_error_ratio=valid.spec.fabric.frame_error_ratio,
        link_level_retry=tech.link_level_retry,
        worst_case_switch_hops=max(1, design.worst_case_switch_hops),
    )
