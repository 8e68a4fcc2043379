"""Hardware specifications as the catalog describes them.

Every figure is a :class:`Figure`: its value and whether it is a measurement, a vendor figure or an
estimate. Every entry carries the ``source`` it came from and the ``date`` of that source.

>>> f = Figure(value=130.0, basis="estimate", note="no vendor figure")
>>> f.value, f.basis
(130.0, 'estimate')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from fabricplan.model.base import Frozen

Basis = Literal["measured", "vendor", "estimate", "derived", "standard"]
"""Where a figure comes from: a measurement, a vendor document, our estimate, arithmetic on other
cited figures, or a published standard (IBTA, IEEE)."""

SwitchFamily = Literal["infiniband", "ethernet"]
LinkFlowControlName = Literal["credit", "pfc", "scheduled", "none"]
CongestionControlName = Literal[
    "ib_cc", "dcqcn", "spectrum_x_cc", "uec_nscc", "voq_scheduled", "none"
]
TechnologyRoutingName = Literal["static", "ecmp", "flowlet", "adaptive", "spray"]
DeliveryName = Literal["in_order", "nic_reorder", "out_of_order"]
CableKind = Literal["dac", "acc", "aoc", "optic"]
EntryKind = Literal["switch", "nic", "cable", "node", "technology"]


class Figure(Frozen):
    """One number with its basis (and its own source when it differs from the entry's)."""

    value: float
    basis: Basis
    source: str = ""
    note: str = ""


class Entry(Frozen):
    """Fields every catalog entry has."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$")
    name: str
    source: str = Field(min_length=3)
    date: str = Field(pattern=r"^\d{4}(-\d{2}){0,2}$")
    notes: str = ""


class PortMode(Frozen):
    """One way to run a switch's cages: ``ports`` logical ports at ``speed_gbps``."""

    ports: int = Field(gt=0)
    speed_gbps: float = Field(gt=0)


class SwitchSpec(Entry):
    """A switch system (or a generic switch given by its figures)."""

    kind: Literal["switch"] = "switch"
    family: SwitchFamily
    asic: str = ""
    port_modes: tuple[PortMode, ...] = Field(min_length=1)
    """Native mode first, then breakouts (e.g. 64x800G, 128x400G)."""
    capacity_tbps: Figure
    """Sum of port speeds in one direction (ports x speed); InfiniBand vendors often quote twice
    this, counting both directions."""
    latency_ns: Figure
    """Port-to-port (cut-through) forwarding latency."""
    buffer_bytes: Figure | None = None
    power_w: Figure
    """Typical system power without optics."""
    rack_units: int = 1
    cages: int | None = Field(default=None, gt=0)
    """Front-panel cages (OSFP / QSFP); ``ports / cages`` logical ports share one cage, so one
    twin-port module carries two links on a 64-port, 32-cage QM9700. ``None``: one per port."""
    adaptive_routing: bool = False
    in_network_reduction: bool = False
    """SHARP-style in-network reduction."""
    embedded_sm_max_nodes: Figure | None = None
    """A managed InfiniBand switch's embedded subnet manager: the most nodes (HCAs and switches)
    of a subnet it manages; ``None``: no embedded SM (unmanaged, or no figure found)."""
    packet_trimming: bool = False
    """Cuts a packet that would overflow a queue to its header and forwards the header (UEC)."""
    link_level_retry: bool = False
    """Retransmits corrupted frames per link (UEC LLR)."""
    credit_flow_control: bool = False
    """Sends frames only against the next hop's buffer credits (UEC CBFC)."""
    lane_gbps: Figure | None = None
    """Electrical SerDes lane rate of its ports, in Gb/s of data per lane (the 100G class signals
    at 106.25 Gb/s PAM4, IEEE 802.3ck; the 200G class at 212.5, 802.3dj); a port of ``s`` Gb/s
    uses ``s / lane_gbps`` lanes. ``None``: not stated (a switch given by its figures), so any
    cable or module fits. The cable chooser plugs in only modules of this lane rate."""
    role: Literal["switch", "fabric_element"] = "switch"
    """``fabric_element``: a cell switch of a scheduled fabric's spine (no host ports)."""
    fabric_port_modes: tuple[PortMode, ...] = ()
    """A scheduled-fabric leaf's ports towards the fabric elements (cell links), native mode
    first, apart from its host ports in ``port_modes`` (e.g. 18 x 800G host ports and 20 x 800G
    fabric ports on a Jericho3-AI leaf); empty for every other switch."""

    def fabric_port_mode_for(self, speed_gbps: float) -> PortMode | None:
        """The fabric port mode at ``speed_gbps``, if any (a scheduled-fabric leaf only)."""
        for mode in self.fabric_port_modes:
            if mode.speed_gbps == speed_gbps:
                return mode
        return None

    def port_mode_for(self, speed_gbps: float) -> PortMode | None:
        """The port mode whose speed equals ``speed_gbps`` (the radix at that speed), if any."""
        for mode in self.port_modes:
            if mode.speed_gbps == speed_gbps:
                return mode
        return None

    def links_per_cage(self, mode: PortMode) -> int:
        """Logical ports that share one cage in ``mode`` (1 when the cage count is unknown).

        >>> f = Figure(value=1, basis="estimate")
        >>> sw = SwitchSpec(id="sw", name="sw", source="test", date="2024", family="ethernet",
        ...     port_modes=(PortMode(ports=64, speed_gbps=800), PortMode(ports=128,
        ...     speed_gbps=400)), capacity_tbps=f, latency_ns=f, power_w=f, cages=64)
        >>> [sw.links_per_cage(m) for m in sw.port_modes]
        [1, 2]
        """
        if self.cages is None:
            return 1
        return max(1, mode.ports // self.cages)

    @property
    def max_port_speed_gbps(self) -> float:
        return max(mode.speed_gbps for mode in self.port_modes)


class NicSpec(Entry):
    """A host adapter (NIC, SuperNIC, DPU, HCA)."""

    kind: Literal["nic"] = "nic"
    families: tuple[SwitchFamily, ...] = Field(min_length=1)
    """Link layers it speaks: an InfiniBand HCA, an Ethernet NIC, or both (VPI)."""
    speed_gbps: float = Field(gt=0)
    ports: int = Field(default=1, gt=0)
    latency_ns: Figure
    """One-way adapter latency (doorbell to wire, wire to completion), both ends summed per side."""
    power_w: Figure
    host_interface_gbps: Figure | None = None
    """Data rate of the adapter's host link after line coding (PCIe Gen4 x16: 16 GT/s x 16 lanes x
    128/130 = 252.06 Gb/s); ``None`` when the catalog does not say. Transaction-layer overheads
    are the performance model's business, not this figure's."""
    lane_gbps: Figure | None = None
    """Electrical SerDes lane rate of its port, in Gb/s per lane (ConnectX-7: 4 x 100G at 400G);
    ``None``: not stated, any NIC-side module fits. See :attr:`SwitchSpec.lane_gbps`."""
    slower_lanes_gbps: tuple[float, ...] = ()
    """Slower lane rates its port also runs at its speed, on more lanes, where ``lane_gbps``'s note
    says why (ConnectX-8 at 400GbE as 4 x 100G on a Spectrum-4); the native rate is preferred."""
    congestion_control: tuple[str, ...] = ()
    cnp_priority: int | None = None
    cnp_dscp: int | None = None


FibreMedium = Literal["smf", "mmf"]
"""Single-mode (DR, FR: 1310 nm) or multimode (SR: 850 nm, OM4) fibre."""


class OpticsSpec(Frozen):
    """The optical side of one link at a module's face: what the fibre carries between its two
    ends (IEEE 802.3 PMD clauses; NVIDIA LinkX nomenclature for twin-port modules).

    Two modules link only when their optical sides match (:meth:`links_with`): lanes, lane
    rate, fibre, wavelengths per fibre and cords. The connector is stated for the reader: a
    breakout module (``links`` > 1) splits its connectors over its links through the class's
    cord (a twin-port 2 x DR4 OSFP's two MPO-12 to two 400G DR4 NIC modules, the NDR build).

    >>> dr4 = OpticsSpec(pmd="400GBASE-DR4", lanes=4, lane_gbps=100, fibre="smf",
    ...                  connector="MPO-12/APC")
    >>> fr4 = dr4.model_copy(update={"pmd": "400GBASE-FR4", "wavelengths": 4})
    >>> dr4.links_with(dr4.model_copy(update={"pmd": "DR4 of a twin-port"})), dr4.links_with(fr4)
    (True, False)
    """

    pmd: str = Field(min_length=2)
    """The optical interface's name, e.g. ``400GBASE-DR4`` or ``800G 2 x DR4 (DR8)``."""
    lanes: int = Field(gt=0)
    """Optical lanes of one link (fibre pairs of a parallel PMD, wavelengths of a WDM one)."""
    lane_gbps: float = Field(gt=0)
    """Data rate of each optical lane (100 for 100G PAM4, 200 for 200G PAM4), Gb/s."""
    fibre: FibreMedium
    wavelengths: int = Field(default=1, gt=0)
    """Wavelengths on each fibre (4 for a CWDM FR4; 1 for parallel DR and SR)."""
    connector: str = Field(min_length=2)
    """Optical connector(s) of one link at the module (``MPO-12/APC``, ``2 x MPO-12/APC``,
    ``duplex LC``)."""
    cords: int = Field(default=1, gt=0)
    """Fibre cords one link takes (2 for an 800G 2 x DR4 port: one per MPO-12)."""

    def links_with(self, other: OpticsSpec) -> bool:
        """Whether a module of these optics links with one of ``other`` over the fibre."""
        return self._key() == other._key()

    def _key(self) -> tuple[int, float, str, int, int]:
        return (self.lanes, self.lane_gbps, self.fibre, self.wavelengths, self.cords)

    def label(self) -> str:
        """``pmd: lanes x rate fibre, connector`` for a message.

        >>> OpticsSpec(pmd="400GBASE-DR4", lanes=4, lane_gbps=100, fibre="smf",
        ...            connector="MPO-12/APC").label()
        '400GBASE-DR4: 4 x 100G smf, MPO-12/APC'
        """
        grid = f" {self.wavelengths} wavelengths" if self.wavelengths > 1 else ""
        cords = f", {self.cords} cords" if self.cords > 1 else ""
        return (
            f"{self.pmd}: {self.lanes} x {self.lane_gbps:g}G {self.fibre}{grid},"
            f" {self.connector}{cords}"
        )


class ModuleSpec(Frozen):
    """A pluggable transceiver that one link class is built from."""

    item: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-\.]*$")
    """Price-book id (an orderable part)."""
    name: str
    links: int = Field(default=1, gt=0)
    """Links one module carries (2 for a twin-port OSFP at 2 x 400G)."""
    power_w: Figure
    """Power of one module."""
    source: str = Field(min_length=3)
    lane_gbps: float | None = Field(default=None, gt=0)
    """Rate of each electrical lane at the module's connector (the device's SerDes side), Gb/s;
    a gearbox module's differs from its optical lanes. ``None``: not stated, fits any device."""
    optics: OpticsSpec | None = None
    """Its optical side, per link it carries (a twin-port 2 x DR4 module: one DR4 per link).
    Every module of a composed class states it, and all of a class's match (FP1237, FP1238)."""


class CableSpec(Entry):
    """A cable or optic by reach class (one link of ``speed_gbps`` up to ``max_reach_m``).

    Copper and active optical cables are one orderable item per link. An optical link class
    names the modules it is built from: at a switch, one module per cage carrying exactly the
    cage's links (``single_module`` one, ``twin_module`` two as a twin-port OSFP,
    ``quad_module`` four as a 1.6T OSFP at 4 x 400G; none for that count: the class cannot be
    plugged into that cage); at the NIC, ``host_module`` (none: the class does not serve host
    links); and its ``fibre`` cord, priced per cord plus per metre. A class without modules is
    priced and counted as a whole link."""

    kind: Literal["cable"] = "cable"
    cable_kind: CableKind
    speed_gbps: float = Field(gt=0)
    max_reach_m: float = Field(gt=0)
    power_w: Figure
    """Power of the whole link (both ends), in watts."""
    ns_per_m: Figure
    """Propagation delay per metre."""
    twin_module: ModuleSpec | None = None
    single_module: ModuleSpec | None = None
    quad_module: ModuleSpec | None = None
    host_module: ModuleSpec | None = None
    fibre: str | None = None
    """Fibre cord item: ``price(fibre) + length x price(fibre-per-m)``; one cord per link."""
    host_links: bool = True
    """False for classes that only join switches (e.g. 500 m DR4: NIC-side modules reach 100 m)."""
    host_gearbox_module: ModuleSpec | None = None
    """NIC-side module of the same optics for a NIC whose SerDes lanes differ from
    ``host_module``'s (a gearbox: e.g. 4 x 100G electrical to 2 x 200G optical)."""
    lane_gbps: tuple[float, ...] = ()
    """A cable bought whole: the electrical lane rates its products come in (both ends run the
    same rate: a passive cable's lanes are its wires). Empty: not stated, fits any device.
    Composed classes state their lanes on each module instead."""

    @property
    def composed(self) -> bool:
        """True when the link is built from modules and fibre rather than bought whole."""
        return any(m is not None for m in (self.single_module, self.twin_module, self.quad_module))

    @property
    def optics(self) -> OpticsSpec | None:
        """The class's optical side per link: its modules' (the catalog checks that they all
        match, FP1237); ``None`` for a cable bought whole."""
        for module in (*self.switch_modules, *self.host_modules):
            if module.optics is not None:
                return module.optics
        return None

    @property
    def cords_per_link(self) -> int:
        """Fibre cords one link of a composed class takes (2 for an 800G 2 x DR4 port)."""
        optics = self.optics
        return 1 if optics is None else optics.cords

    @property
    def host_modules(self) -> tuple[ModuleSpec, ...]:
        """The NIC-side modules of the class: the plain one, then its gearbox variant."""
        return tuple(m for m in (self.host_module, self.host_gearbox_module) if m is not None)

    @property
    def switch_modules(self) -> tuple[ModuleSpec, ...]:
        """The switch-side modules of the class (one per cage width it can plug into)."""
        return tuple(
            m for m in (self.single_module, self.twin_module, self.quad_module) if m is not None
        )


GpuNicPath = Literal["pix", "pxb", "p2c", "pxn", "phb", "sys"]
"""How far a GPU is from its closest NIC, in NCCL's path types (``src/graph/topo.h``, nearest
first): one PCIe switch (``pix``), several (``pxb``), through the GPU's C2C link and its CPU
(``p2c``, Grace), through another GPU over NVLink (``pxn``), through a CPU root complex (``phb``),
across CPU sockets (``sys``)."""


class PcieLinkSpec(Frozen):
    """One PCIe link: generation and lane count (the slot a NIC sits in)."""

    generation: int = Field(ge=1, le=6)
    lanes: Literal[1, 2, 4, 8, 16, 32]


class NodeSpec(Entry):
    """A GPU server model (GPUs, their compute and their NVLink domain)."""

    kind: Literal["node"] = "node"
    gpu: str
    gpus_per_node: int = Field(gt=0)
    dense_bf16_tflops: Figure
    """Dense BF16/FP16 tensor throughput per GPU."""
    hbm_gb: Figure
    nvlink_GBps: Figure  # noqa: N815 - GB/s, unidirectional per GPU
    """NVLink bandwidth per GPU, one direction, GB/s."""
    nvlink_domain_gpus: int = Field(default=8, gt=0)
    power_w: Figure
    """Node power (GPUs, CPUs, memory, fans), without the scale-out network."""
    default_nic: str
    nvls: bool = False
    """NVLink SHARP (in-switch reduction in the NVLink domain)."""
    nic_slot: PcieLinkSpec | None = None
    """The PCIe link each scale-out NIC sits on; ``None``: the NIC's own host interface."""
    pcie_switches: int | None = Field(default=None, gt=0)
    """PCIe switches that each join an equal share of the GPUs to an equal share of the NICs; a
    GPU uses the NICs on its own switch (NCCL picks the closest NICs). ``None``: every GPU
    reaches every NIC equally."""
    gpu_nic_path: GpuNicPath = "pxb"
    """Path from a GPU to its closest NIC (decides whether NCCL enables LL128 across nodes)."""
    host_source: str = ""
    """Where ``nic_slot``, ``pcie_switches`` and ``gpu_nic_path`` come from."""


class TechnologySpec(Entry):
    """A fabric technology as mechanisms and figures, never as a verdict."""

    kind: Literal["technology"] = "technology"
    switch_family: SwitchFamily
    link_flow_control: LinkFlowControlName
    """How a link avoids loss: ``credit`` (receiver buffer credits per virtual lane), ``pfc``
    (802.1Qbb pause per priority), ``scheduled`` (a VOQ fabric sends only what the egress granted,
    so no fabric queue can overflow) or ``none`` (lossy: drops, or trims where the switch can)."""
    congestion_control: CongestionControlName
    """The end-to-end rate control: ``ib_cc`` (InfiniBand FECN/BECN CCA), ``dcqcn`` (ECN + CNP),
    ``spectrum_x_cc`` (NIC rate control from switch in-band telemetry), ``uec_nscc`` (UEC's
    sender-side network-signal CC: ECN, RTT, trims), ``voq_scheduled`` (ingress request/grant
    scheduling of a DDC fabric) or ``none``."""
    routing: TechnologyRoutingName
    """Default routing on a well-run fabric of this technology: ``static`` tables, ``ecmp`` per-flow
    hash, ``flowlet`` (re-hash a flow after an idle gap), ``adaptive`` (per-packet least-loaded
    output chosen in the switch), ``spray`` (every packet or cell over all equal-cost links)."""
    adaptive_routing_available: bool
    scope: Literal["ib_subnet", "l2_domain", "routed_ip"]
    delivery: DeliveryName = "in_order"
    """What the receiving NIC accepts: ``in_order`` (RC go-back-N: a packet out of order is a
    loss), ``nic_reorder`` (the NIC places out-of-order packets directly, e.g. a SuperNIC) or
    ``out_of_order`` (the transport itself is unordered, e.g. UET RUD)."""
    packet_trimming: bool = False
    """Switches cut an overflowing packet to its header and forward that, so the receiver NACKs at
    once (needs switches with ``packet_trimming``)."""
    link_level_retry: bool = False
    """Links retransmit corrupted frames themselves (UEC LLR), so bit errors do not reach the
    transport."""
    cell_bytes: Figure | None = None
    """A scheduled fabric's cell payload: packets are cut into cells of up to this size."""
    cell_header_bytes: Figure | None = None
    """Bytes every cell carries on a fabric link beyond its payload."""
    switch_asics: tuple[str, ...] = ()
    """Switch ASICs this technology needs at the leaves (``asic`` of catalog switches); empty: any
    switch of ``switch_family``."""
    fabric_element_asics: tuple[str, ...] = ()
    """ASICs of the cell-switching fabric elements a scheduled fabric's spine is built from."""
    nics: tuple[str, ...] = ()
    """Catalog NIC ids this technology needs (e.g. a SuperNIC); empty: any NIC of the family."""
    mtu_bytes: int = Field(gt=0)
    """Largest RDMA payload per packet (the path MTU)."""
    header_bytes: Figure
    """Per-packet bytes on the wire beyond the payload (headers, CRCs, preamble and gaps)."""
    max_endpoints_per_domain: Figure | None = None
    """Unicast address space of one subnet / L2 domain, when there is a hard limit."""
    vendors: tuple[str, ...] = ()
    cloud_availability: Literal["none", "some", "wide"] = "some"
    in_network_reduction: bool = False


class PriceEntry(Frozen):
    """One price in a price book, with its basis."""

    item: str
    price_usd: float = Field(ge=0, le=1e12)
    basis: Basis
    note: str = ""
    date: str = ""


FIBRE_PER_METRE_SUFFIX = "-per-m"
"""Price-book item ``<fibre>-per-m``: a fibre's price per metre of cord."""


def fibre_cord_usd(prices: Mapping[str, PriceEntry], fibre: str, length_m: float) -> float:
    """One fibre cord of ``length_m``: its base price plus length x its price per metre
    (``inf`` when the base price is missing).

    >>> entries = {"smf": PriceEntry(item="smf", price_usd=50, basis="estimate"),
    ...     "smf-per-m": PriceEntry(item="smf-per-m", price_usd=1.0, basis="estimate")}
    >>> fibre_cord_usd(entries, "smf", 30)
    80.0
    """
    base = prices.get(fibre)
    if base is None:
        return math.inf
    per_m = prices.get(fibre + FIBRE_PER_METRE_SUFFIX)
    return base.price_usd + (per_m.price_usd if per_m is not None else 0.0) * length_m


CatalogItem = SwitchSpec | NicSpec | CableSpec | NodeSpec | TechnologySpec
