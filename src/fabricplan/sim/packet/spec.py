"""What one packet-level run is asked to model: the mechanisms and their settings.

A :class:`PacketSpec` names the technology's mechanisms — link-level flow control, congestion
control, routing — and the settings of each (:mod:`~fabricplan.sim.packet.pfc`,
:mod:`~fabricplan.sim.packet.credit`, :mod:`~fabricplan.sim.packet.ecn`,
:mod:`~fabricplan.sim.packet.dcqcn`, :mod:`~fabricplan.sim.packet.hpcc`,
:mod:`~fabricplan.sim.packet.ibcc`). :func:`packet_spec_for` reads them from the catalog's
technology entry, as the flow level does: nothing here names a technology.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from fabricplan.errors import ModelError
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.mechanism import default_routing
from fabricplan.sim.packet.credit import CreditSpec
from fabricplan.sim.packet.dcqcn import DcqcnSpec
from fabricplan.sim.packet.ecn import EcnSpec
from fabricplan.sim.packet.hpcc import HpccSpec
from fabricplan.sim.packet.ibcc import IbccSpec
from fabricplan.sim.packet.pfc import PfcSpec

PacketRouting = Literal["static", "ecmp", "adaptive", "spray"]
PacketFlowControl = Literal["credit", "pfc", "none"]
PacketCongestionControl = Literal["none", "dcqcn", "hpcc", "ib_cc"]

ACK_EXTRA_BYTES = 4
"""An ACK is a header plus the 4-byte AETH (IBTA Vol. 1 §9.3; RoCE carries the same BTH/AETH)."""
CNP_EXTRA_BYTES = 16
"""A RoCEv2 CNP carries 16 reserved bytes after the BTH (IBTA Annex A17)."""
CUT_THROUGH_BYTES = 64
"""A cut-through switch starts forwarding once the first 64 bytes (the headers) are in."""
RTO_US = 1048.576
"""Retransmission timeout: ``4.096 µs x 2^8`` (the RC QP ``timeout`` field's unit, IBTA Vol. 1
§9.7.6.1.3, at exponent 8). NCCL's default exponent 18 (1.07 s) would outlast a simulated run;
timeouts are counted in the result."""
SAMPLE_US = 2.0
"""Default probe period (queue depth of every link)."""
MAX_SAMPLES = 4096
STALL_LIMIT_US = 2000.0
"""No byte delivered for this long while flows are unfinished: the run reports a stall."""
DEFAULT_END_US = 1e6
MAX_PACKETS = 20_000_000
"""Data packets one run may carry (about 40 s per million flows' worth of a few hundred
events each; the yardstick is 0.5 M). Larger traffic is the flow level's job."""
DATA_CLASSES = 2
"""Data traffic classes (PFC priorities / IB virtual lanes) besides the control class."""


@dataclass(frozen=True)
class FaultSpec:
    """Faults injected into a run."""

    stuck_hosts: tuple[tuple[int, float], ...] = ()
    """(host, time µs): the host's NIC stops draining its receive buffer from that time."""


@dataclass(frozen=True)
class PacketSpec:
    """The mechanisms and settings of one packet-level run."""

    link_flow_control: PacketFlowControl
    congestion_control: PacketCongestionControl
    routing: PacketRouting
    mtu_bytes: int
    """Payload bytes per packet."""
    header_bytes: int
    """Wire bytes per packet beyond the payload (headers, CRCs, preamble and gap)."""
    lossless_classes: tuple[int, ...] = (1, 2)
    """Data classes protected by the link-level flow control (others are lossy)."""
    cut_through: bool = True
    ack_interval: int = 1
    rto_us: float = RTO_US
    window_bytes: int = 0
    """Bytes in flight per flow at most (0: no window; HPCC sets its own)."""
    switch_buffer_bytes: float | None = None
    """Buffer of every switch; ``None`` keeps the network's."""
    lossy_alpha: float = 1.0
    """Dynamic threshold of a lossy output queue (share of the free shared pool)."""
    pfc: PfcSpec = field(default_factory=PfcSpec)
    credit: CreditSpec = field(default_factory=CreditSpec)
    ecn: EcnSpec = field(default_factory=EcnSpec)
    dcqcn: DcqcnSpec = field(default_factory=DcqcnSpec)
    hpcc: HpccSpec = field(default_factory=HpccSpec)
    ibcc: IbccSpec = field(default_factory=IbccSpec)
    faults: FaultSpec = field(default_factory=FaultSpec)
    sample_us: float = SAMPLE_US
    max_samples: int = MAX_SAMPLES
    stall_limit_us: float = STALL_LIMIT_US
    end_us: float = DEFAULT_END_US
    max_packets: int = MAX_PACKETS

    @property
    def lossless(self) -> bool:
        return self.link_flow_control != "none"

    def check(self) -> PacketSpec:
        """Raise :class:`ModelError` (FP541) on settings that cannot run.

        >>> packet_spec("pfc", "dcqcn", "ecmp").check().routing
        'ecmp'
        """
        problems = [
            (self.mtu_bytes <= 0, "mtu_bytes", self.mtu_bytes, "give a positive payload size"),
            (self.header_bytes < 0, "header_bytes", self.header_bytes, "give 0 or more"),
            (self.ack_interval < 1, "ack_interval", self.ack_interval, "give 1 or more"),
            (self.rto_us <= 0, "rto_us", self.rto_us, "give a positive timeout"),
            (
                any(c < 1 or c > DATA_CLASSES for c in self.lossless_classes),
                "lossless_classes",
                self.lossless_classes,
                f"name data classes between 1 and {DATA_CLASSES}",
            ),
            (self.sample_us <= 0, "sample_us", self.sample_us, "give a positive period"),
        ]
        for bad, name, value, fix in problems:
            if bad:
                raise ModelError("FP541", f"packet spec {name}", "cannot be simulated", value, fix)
        return self


def packet_spec(
    link_flow_control: PacketFlowControl,
    congestion_control: PacketCongestionControl,
    routing: PacketRouting,
    mtu_bytes: int = 4096,
    header_bytes: int = 82,
) -> PacketSpec:
    """A spec from its three mechanisms (other settings at their defaults).

    >>> s = packet_spec("credit", "ib_cc", "adaptive", header_bytes=26)
    >>> s.lossless, s.ecn.enabled
    (True, False)
    """
    return PacketSpec(
        link_flow_control=link_flow_control,
        congestion_control=congestion_control,
        routing=routing,
        mtu_bytes=mtu_bytes,
        header_bytes=header_bytes,
        ecn=EcnSpec(enabled=congestion_control == "dcqcn"),
    )


def packet_spec_for(
    tech: TechnologySpec,
    switch: SwitchSpec,
    routing: PacketRouting | None = None,
    congestion_control: PacketCongestionControl | None = None,
) -> PacketSpec:
    """The spec of a catalog technology on a catalog switch (with optional overrides).

    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> s = packet_spec_for(valid.technologies["infiniband"], valid.switches["infiniband"])
    >>> s.link_flow_control, s.congestion_control, s.routing, s.header_bytes
    ('credit', 'ib_cc', 'adaptive', 26)
    """
    spec = packet_spec(
        tech.link_flow_control,
        congestion_control or tech.congestion_control,
        routing or default_routing(tech, switch),
        mtu_bytes=tech.mtu_bytes,
        header_bytes=int(tech.header_bytes.value),
    )
    buffer = switch.buffer_bytes.value if switch.buffer_bytes is not None else None
    return replace(spec, switch_buffer_bytes=buffer)
