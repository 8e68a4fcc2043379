"""What one packet-level run is asked to model: the mechanisms and their settings.

A :class:`PacketSpec` names the technology's mechanisms — link-level flow control, congestion
control, routing, what the receiving NIC accepts (delivery), packet trimming, a scheduled
fabric's cells — and the settings of each (:mod:`~fabricplan.sim.packet.pfc`,
:mod:`~fabricplan.sim.packet.credit`, :mod:`~fabricplan.sim.packet.ecn`,
:mod:`~fabricplan.sim.packet.dcqcn`, :mod:`~fabricplan.sim.packet.hpcc`,
:mod:`~fabricplan.sim.packet.ibcc`, :mod:`~fabricplan.sim.packet.nscc`,
:mod:`~fabricplan.sim.packet.voq`). :func:`packet_spec_for` reads them from the catalog's
technology entry, as the flow level does: nothing here names a technology.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.mechanism import (
    RoutingName,
    adaptive_routing_of,
    default_routing,
    placed_routing,
    refuse_unmodelled,
    simulated_mechanisms,
)
from fabricplan.sim.packet.credit import CBFC_CREDIT_BYTES, CreditSpec
from fabricplan.sim.packet.dcqcn import DcqcnSpec
from fabricplan.sim.packet.ecn import EcnSpec
from fabricplan.sim.packet.flowlet import FLOWLET_GAP_US
from fabricplan.sim.packet.hpcc import SPECTRUM_X_CC, HpccSpec
from fabricplan.sim.packet.ibcc import IbccSpec
from fabricplan.sim.packet.nscc import NsccSpec
from fabricplan.sim.packet.pfc import PAUSE_FRAME_BYTES, PfcSpec
from fabricplan.sim.packet.state import (
    CC_DCQCN,
    CC_HPCC,
    CC_IBCC,
    CC_NONE,
    CC_NSCC,
    DELIVER_IN_ORDER,
    DELIVER_REORDER,
    DELIVER_SELECTIVE,
    FC_CREDIT,
    FC_NONE,
    FC_PFC,
    FC_SCHEDULED,
    N_PARAM_F,
    N_PARAM_I,
    NEVER_PS,
    PF_DQ_AI,
    PF_DQ_DEC_DIVISOR,
    PF_DQ_G,
    PF_DQ_HAI,
    PF_DQ_INIT_ALPHA,
    PF_DQ_MIN_DEC,
    PF_DQ_MIN_RATE,
    PF_ECN_KMAX,
    PF_ECN_KMIN,
    PF_ECN_PMAX,
    PF_HP_AI,
    PF_HP_ETA,
    PF_HP_MIN_RATE,
    PF_IB_IPD_STEP,
    PF_IB_THRESHOLD_BUFFERS,
    PF_LOSSY_ALPHA,
    PF_NS_FI_GAIN,
    PF_NS_MAX_CWND_BDP,
    PF_NS_MAX_MD,
    PF_NS_MD_GAIN,
    PF_NS_PI_GAIN,
    PF_NS_TRIM_MD,
    PF_PFC_ALPHA,
    PI_ACK_BYTES,
    PI_ACK_INTERVAL,
    PI_BASE_RTT,
    PI_BDP,
    PI_CC,
    PI_CELL_BYTES,
    PI_CELL_HEADER,
    PI_CLASSES,
    PI_CNP_BYTES,
    PI_CREDIT_BLOCK,
    PI_CUT_BYTES,
    PI_CUT_THROUGH,
    PI_DELIVERY,
    PI_DQ_ALPHA_PERIOD,
    PI_DQ_BYTE_RESET,
    PI_DQ_CLAMP,
    PI_DQ_CLAMP_AFTER_TIME,
    PI_DQ_CNP_INTERVAL,
    PI_DQ_DEC_PERIOD,
    PI_DQ_THRESHOLD,
    PI_DQ_TIME_RESET,
    PI_ECN_ON,
    PI_END,
    PI_FC,
    PI_FLOWLET_GAP,
    PI_HEADER,
    PI_HOSTS,
    PI_HP_INT_BYTES,
    PI_HP_MAX_STAGE,
    PI_HP_T,
    PI_HP_WIN,
    PI_IB_INCREASE,
    PI_IB_LIMIT,
    PI_IB_MARKING,
    PI_IB_MIN,
    PI_IB_THRESHOLD,
    PI_IB_TIMER,
    PI_LLR,
    PI_MAX_HOPS,
    PI_NIC_XOFF,
    PI_NS_MIN_CWND,
    PI_NS_TARGET,
    PI_PAUSE_FRAME,
    PI_PAYLOAD,
    PI_PFC_QUANTA,
    PI_PFC_RESUME,
    PI_PFC_STATIC_XOFF,
    PI_REASSEMBLY,
    PI_REORDER_WINDOW,
    PI_ROUTING,
    PI_RTO,
    PI_SAMPLE,
    PI_STALL_LIMIT,
    PI_TRIM,
    PI_TRIM_BYTES,
    PI_WD_DETECT,
    PI_WD_ON,
    PI_WD_POLL,
    PI_WD_RESTORE,
    PI_WINDOW,
    ROUTE_ADAPTIVE,
    ROUTE_FLOWLET,
    ROUTE_PATH,
    ROUTE_SPRAY,
)
from fabricplan.units import BITS_PER_BYTE, PS_PER_S, bps_to_gbps, mbps_to_bps, us_to_ps

PacketRouting = Literal["static", "ecmp", "adaptive", "spray", "flowlet"]
PacketFlowControl = Literal["credit", "pfc", "none", "scheduled"]
PacketCongestionControl = Literal[
    "none", "dcqcn", "hpcc", "ib_cc", "spectrum_x_cc", "uec_nscc", "voq_scheduled"
]
PacketDelivery = Literal["in_order", "nic_reorder", "out_of_order"]
"""What the receiving NIC accepts: ``in_order`` (go-back-N, as an RC queue pair: a packet out
of order is discarded and NACKed), ``nic_reorder`` (placed in any order within a reorder
window, cumulative ACK) or ``out_of_order`` (placed in any order, every packet acknowledged
selectively, selective repeat: UET's reliable unordered delivery)."""
PER_PACKET_ROUTINGS = ("adaptive", "spray")

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
STALL_RTOS = 3
"""A run is declared stalled only after this many retransmission timeouts without progress (a
timeout must have had its chance to recover a lost tail)."""
DEFAULT_LINE_BPS = 100e9
"""Line rate assumed for the rate-based settings of a network without hosts."""
SUPERNIC_REORDER_WINDOW_PACKETS = 512
"""Packets beyond the next expected one a reordering NIC can place (a technology whose
catalog delivery is ``nic_reorder``). Estimate: NVIDIA publishes no reorder capacity for the
BlueField-3 / ConnectX-8 SuperNIC's direct data placement; 512 packets of 4 KiB (2 MiB) is
several bandwidth-delay products of a 400 Gb/s path of a few µs, so that only a badly skewed
fabric exceeds it."""

FLOW_CONTROL_CODE = {
    "none": int(FC_NONE),
    "pfc": int(FC_PFC),
    "credit": int(FC_CREDIT),
    "scheduled": int(FC_SCHEDULED),
}
CONGESTION_CONTROL_CODE = {
    "none": int(CC_NONE),
    "dcqcn": int(CC_DCQCN),
    "hpcc": int(CC_HPCC),
    "ib_cc": int(CC_IBCC),
    "spectrum_x_cc": int(CC_HPCC),
    "uec_nscc": int(CC_NSCC),
    "voq_scheduled": int(CC_NONE),
}
"""``spectrum_x_cc`` runs HPCC's telemetry law with its own settings (``PacketSpec.spectrum_x``,
:data:`~fabricplan.sim.packet.hpcc.SPECTRUM_X_CC`); ``voq_scheduled`` is the scheduling of a
``scheduled`` fabric itself (:mod:`~fabricplan.sim.packet.voq`), with no end-to-end rate
control on top."""
DELIVERY_CODE = {
    "in_order": int(DELIVER_IN_ORDER),
    "nic_reorder": int(DELIVER_REORDER),
    "out_of_order": int(DELIVER_SELECTIVE),
}
ROUTING_CODE = {
    "static": int(ROUTE_PATH),
    "ecmp": int(ROUTE_PATH),
    "adaptive": int(ROUTE_ADAPTIVE),
    "spray": int(ROUTE_SPRAY),
    "flowlet": int(ROUTE_FLOWLET),
}
"""The kernel's integer code of each mechanism."""


@dataclass(frozen=True)
class FaultSpec:
    """Faults injected into a run."""

    stuck_hosts: tuple[tuple[int, float], ...] = ()
    """(host, time µs): the host's NIC stops draining its receive buffer from that time."""
    frame_error_ratio: float = 0.0
    """Share of data frames that arrive with a bad FCS on every link (bit errors past FEC);
    dropped at the receiving end, or replayed by the link under link-level retry."""
    frame_errors: tuple[tuple[int, float], ...] = ()
    """(link, share): the frame error ratio of single links (overrides the one above)."""


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
    spectrum_x: HpccSpec = SPECTRUM_X_CC
    """Settings of ``spectrum_x_cc`` (HPCC's law; see :data:`~fabricplan.sim.packet.hpcc.
    SPECTRUM_X_CC`)."""
    nscc: NsccSpec = field(default_factory=NsccSpec)
    delivery: PacketDelivery | None = None
    """What the receiving NIC accepts; ``None``: by the routing (:attr:`receiver`)."""
    reorder_window_packets: int = 0
    """``nic_reorder``: packets beyond the expected one the NIC can place (0: no bound)."""
    packet_trimming: bool = False
    """A switch cuts a data packet that would overflow a lossy queue to its header
    (``trimmed_bytes``) and forwards that in the control class, instead of dropping it."""
    trimmed_bytes: int | None = None
    """Wire bytes of a trimmed packet (``None``: ``header_bytes``, the packet's headers)."""
    cell_bytes: int = 0
    """``scheduled``: cell payload on fabric links (0: no cells)."""
    cell_header_bytes: int = 0
    """``scheduled``: bytes each cell carries on a fabric link beyond its payload."""
    egress_reassembly: bool = False
    """The egress leaf hands each flow's packets to the host in sequence, holding those that
    overtook one (a scheduled fabric's reassembly, :func:`~fabricplan.sim.packet.voq.
    reassemble`), so an ``in_order`` receiver sees no reordering under spraying."""
    link_level_retry: bool = False
    """Every link replays a corrupted data frame from its replay buffer one link round trip
    later (:mod:`~fabricplan.sim.packet.llr`) instead of losing it to the transport."""
    flowlet_gap_us: float = FLOWLET_GAP_US
    """``flowlet``: idle gap after which a flow's next packets may take another path."""
    faults: FaultSpec = field(default_factory=FaultSpec)
    sample_us: float = SAMPLE_US
    max_samples: int = MAX_SAMPLES
    stall_limit_us: float = STALL_LIMIT_US
    end_us: float = DEFAULT_END_US
    max_packets: int = MAX_PACKETS

    probe_links: tuple[int, ...] | None = None
    """Links whose queue depth is sampled every ``sample_us`` (``None``: every link)."""

    @property
    def lossless(self) -> bool:
        """Hop-by-hop flow control protects the data classes (PFC or credits); a scheduled
        fabric avoids loss by admission instead, its queues are lossy."""
        return self.link_flow_control in ("pfc", "credit")

    @property
    def receiver(self) -> PacketDelivery:
        """The delivery the receiving NIC runs: ``delivery``, or by the routing when unset —
        per-packet routing (adaptive, spray) places out of order (a NIC paired with per-packet
        routing must: ConnectX with InfiniBand adaptive routing, the egress leaf's reassembly
        of a scheduled fabric), pinned paths run go-back-N.

        >>> packet_spec("pfc", "dcqcn", "adaptive").receiver
        'nic_reorder'
        """
        if self.delivery is not None:
            return self.delivery
        return "nic_reorder" if self.routing in PER_PACKET_ROUTINGS else "in_order"

    @property
    def hpcc_settings(self) -> HpccSpec:
        """The INT law's settings: Spectrum-X's for ``spectrum_x_cc``, else HPCC's."""
        return self.spectrum_x if self.congestion_control == "spectrum_x_cc" else self.hpcc

    def pack(
        self,
        hosts: int,
        classes: int,
        max_hops: int,
        base_rtt_ps: int,
        int_bytes: int,
        ack_bytes: int,
        line_bps: NDArray[np.float64],
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The run's parameter vectors (integers, floats) in the kernel's slots and units
        (picoseconds, bytes, bits per second); ``line_bps`` is every host's line rate."""
        spec = self
        line = float(line_bps.max()) if line_bps.size else DEFAULT_LINE_BPS
        d, h, i, p, ns = spec.dcqcn, spec.hpcc_settings, spec.ibcc, spec.pfc, spec.nscc
        bdp = math.ceil(base_rtt_ps * line / BITS_PER_BYTE / PS_PER_S)
        ints = {
            PI_HOSTS: hosts,
            PI_CLASSES: classes,
            PI_MAX_HOPS: max_hops,
            PI_FC: FLOW_CONTROL_CODE[spec.link_flow_control],
            PI_CUT_THROUGH: int(spec.cut_through),
            PI_CUT_BYTES: CUT_THROUGH_BYTES,
            PI_ROUTING: ROUTING_CODE[spec.routing],
            PI_DELIVERY: DELIVERY_CODE[spec.receiver],
            PI_REORDER_WINDOW: spec.reorder_window_packets,
            PI_TRIM: int(spec.packet_trimming),
            PI_TRIM_BYTES: spec.header_bytes if spec.trimmed_bytes is None else spec.trimmed_bytes,
            PI_CELL_BYTES: spec.cell_bytes,
            PI_CELL_HEADER: spec.cell_header_bytes,
            PI_REASSEMBLY: int(spec.egress_reassembly),
            PI_LLR: int(spec.link_level_retry),
            PI_FLOWLET_GAP: max(1, us_to_ps(spec.flowlet_gap_us)),
            PI_BASE_RTT: max(1, base_rtt_ps),
            PI_BDP: bdp,
            PI_NS_TARGET: us_to_ps(ns.target_qdelay_us),
            PI_NS_MIN_CWND: spec.mtu_bytes,
            PI_ECN_ON: int(spec.ecn.enabled),
            PI_PFC_STATIC_XOFF: p.static_xoff_bytes,
            PI_PFC_RESUME: p.resume_offset_bytes,
            PI_PFC_QUANTA: p.quanta,
            PI_PAUSE_FRAME: PAUSE_FRAME_BYTES,
            PI_NIC_XOFF: p.nic_xoff_bytes,
            PI_CREDIT_BLOCK: spec.credit.block_bytes,
            PI_CC: CONGESTION_CONTROL_CODE[spec.congestion_control],
            PI_DQ_ALPHA_PERIOD: max(1, us_to_ps(d.dce_tcp_rtt_us)),
            PI_DQ_DEC_PERIOD: us_to_ps(d.rate_reduce_monitor_period_us),
            PI_DQ_TIME_RESET: max(1, us_to_ps(d.rpg_time_reset_us)),
            PI_DQ_BYTE_RESET: max(1, d.rpg_byte_reset),
            PI_DQ_THRESHOLD: d.rpg_threshold,
            PI_DQ_CNP_INTERVAL: us_to_ps(d.min_time_between_cnps_us),
            PI_DQ_CLAMP: int(d.clamp_tgt_rate),
            PI_DQ_CLAMP_AFTER_TIME: int(d.clamp_tgt_rate_after_time_inc),
            PI_HP_MAX_STAGE: h.max_stage,
            PI_HP_T: max(1, base_rtt_ps),
            PI_HP_WIN: bdp,
            PI_HP_INT_BYTES: int_bytes,
            PI_IB_THRESHOLD: i.threshold_bytes or 0,
            PI_IB_MARKING: i.marking_rate,
            PI_IB_INCREASE: i.ccti_increase,
            PI_IB_LIMIT: i.ccti_limit,
            PI_IB_MIN: i.ccti_min,
            PI_IB_TIMER: max(1, us_to_ps(i.ccti_timer_us)),
            PI_PAYLOAD: spec.mtu_bytes,
            PI_HEADER: spec.header_bytes,
            PI_ACK_BYTES: ack_bytes,
            PI_CNP_BYTES: spec.header_bytes + CNP_EXTRA_BYTES,
            PI_ACK_INTERVAL: spec.ack_interval,
            PI_RTO: us_to_ps(spec.rto_us),
            PI_WINDOW: spec.window_bytes,
            PI_WD_ON: int(p.watchdog),
            PI_WD_DETECT: us_to_ps(p.watchdog_detect_us),
            PI_WD_RESTORE: us_to_ps(p.watchdog_restore_us),
            PI_WD_POLL: max(1, us_to_ps(p.watchdog_poll_us)),
            PI_SAMPLE: max(1, us_to_ps(spec.sample_us)),
            PI_STALL_LIMIT: us_to_ps(max(spec.stall_limit_us, STALL_RTOS * spec.rto_us)),
            PI_END: min(us_to_ps(spec.end_us), int(NEVER_PS)),
        }
        floats = {
            PF_ECN_KMIN: spec.ecn.kmin_bytes,
            PF_ECN_KMAX: spec.ecn.kmax_bytes,
            PF_ECN_PMAX: spec.ecn.pmax,
            PF_PFC_ALPHA: p.alpha,
            PF_LOSSY_ALPHA: spec.lossy_alpha,
            PF_DQ_G: d.g,
            PF_DQ_INIT_ALPHA: d.initial_alpha_value / 1024.0,
            PF_DQ_DEC_DIVISOR: d.decrease_divisor,
            PF_DQ_MIN_DEC: d.rpg_min_dec_fac / 100.0,
            PF_DQ_AI: mbps_to_bps(d.rpg_ai_rate_mbps),
            PF_DQ_HAI: mbps_to_bps(d.rpg_hai_rate_mbps),
            PF_DQ_MIN_RATE: mbps_to_bps(d.rpg_min_rate_mbps),
            PF_HP_ETA: h.eta,
            PF_HP_AI: mbps_to_bps(h.ai_mbps_per_gbps * bps_to_gbps(line)),
            PF_HP_MIN_RATE: mbps_to_bps(h.min_rate_mbps),
            PF_IB_IPD_STEP: i.ipd_step,
            PF_IB_THRESHOLD_BUFFERS: i.threshold_vl_buffers,
            PF_NS_MD_GAIN: ns.md_gain,
            PF_NS_MAX_MD: ns.max_md,
            PF_NS_PI_GAIN: ns.pi_gain,
            PF_NS_FI_GAIN: ns.fi_gain,
            PF_NS_TRIM_MD: ns.trim_md,
            PF_NS_MAX_CWND_BDP: ns.max_cwnd_bdp,
        }
        prm_i = np.zeros(N_PARAM_I, dtype=np.int64)
        prm_f = np.zeros(N_PARAM_F, dtype=np.float64)
        for k, v in ints.items():
            prm_i[k] = int(v)
        for k, x in floats.items():
            prm_f[k] = float(x)
        return prm_i, prm_f

    def _frame_error_ratios(self) -> tuple[float, ...]:
        return (self.faults.frame_error_ratio, *(r for _, r in self.faults.frame_errors))

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
            (
                self.reorder_window_packets < 0,
                "reorder_window_packets",
                self.reorder_window_packets,
                "give 0 (no bound) or more",
            ),
            (
                self.cell_bytes < 0 or self.cell_header_bytes < 0,
                "cell_bytes",
                (self.cell_bytes, self.cell_header_bytes),
                "give 0 or more",
            ),
            (
                self.trimmed_bytes is not None and self.trimmed_bytes <= 0,
                "trimmed_bytes",
                self.trimmed_bytes,
                "give a positive size or None",
            ),
            (
                not self.flowlet_gap_us > 0,
                "flowlet_gap_us",
                self.flowlet_gap_us,
                "give a positive gap",
            ),
            (
                any(not 0.0 <= r < 1.0 for r in self._frame_error_ratios()),
                "faults.frame_errors",
                (self.faults.frame_error_ratio, self.faults.frame_errors),
                "give shares of frames in [0, 1)",
            ),
        ]
        for bad, name, value, fix in problems:
            if bad:
                raise ModelError("FP541", f"packet spec {name}", "cannot be simulated", value, fix)
        if self.congestion_control == "voq_scheduled" and self.link_flow_control != "scheduled":
            raise ModelError(
                "FP547",
                "packet spec congestion_control",
                "voq_scheduled is the scheduling of a VOQ fabric and needs it",
                self.link_flow_control,
                "use link_flow_control 'scheduled', or another congestion control",
            )
        return self


def packet_spec(
    link_flow_control: PacketFlowControl,
    congestion_control: PacketCongestionControl,
    routing: PacketRouting,
    mtu_bytes: int = 4096,
    header_bytes: int = 82,
    delivery: PacketDelivery | None = None,
) -> PacketSpec:
    """A spec from its three mechanisms (other settings at their defaults; ECN marking on for
    the congestion controls that listen to it, DCQCN and NSCC).

    >>> s = packet_spec("credit", "ib_cc", "adaptive", header_bytes=26)
    >>> s.lossless, s.ecn.enabled, s.receiver
    (True, False, 'nic_reorder')
    >>> packet_spec("none", "uec_nscc", "spray", delivery="out_of_order").ecn.enabled
    True
    """
    return PacketSpec(
        link_flow_control=link_flow_control,
        congestion_control=congestion_control,
        routing=routing,
        mtu_bytes=mtu_bytes,
        header_bytes=header_bytes,
        ecn=EcnSpec(enabled=congestion_control in ("dcqcn", "uec_nscc")),
        delivery=delivery,
    )


def packet_spec_for(
    tech: TechnologySpec,
    switch: SwitchSpec,
    routing: RoutingName | None = None,
    congestion_control: PacketCongestionControl | None = None,
    link_flow_control: PacketFlowControl | None = None,
    link_level_retry: bool | None = None,
) -> PacketSpec:
    """The spec of a catalog technology on a catalog switch (with optional overrides).

    Delivery is the technology's, whatever the routing: an ``in_order`` technology (an RC queue
    pair's go-back-N, RoCEv2 and RoCEv1) forced to per-packet routing keeps its receiver, which
    discards every packet that overtakes another and NAKs the gap, so the sender goes back N
    (IBTA Vol. 1 §9.7.5); only a scheduled fabric's egress leaf reassembles sprayed packets so
    that the host receives them in order (:attr:`PacketSpec.egress_reassembly`). Trimming
    needs both the technology and the switch to trim, link-level retry both to retry (or
    ``link_level_retry``); credit flow control on
    an Ethernet technology is UEC's CBFC, counted in its credits
    (:data:`~fabricplan.sim.packet.credit.CBFC_CREDIT_BYTES`); a ``scheduled`` technology's
    cells come from its entry; ``flowlet`` routing takes the switch's flowlet timer, or
    :data:`~fabricplan.sim.packet.flowlet.FLOWLET_GAP_US` when its ASIC names none. Adaptive
    routing on a switch whose ASIC places flowlets
    (:attr:`~fabricplan.model.load_balancing.AdaptiveRouting.granularity`, Tomahawk's DLB)
    runs as ``flowlet`` routing: a flow moves only after an idle gap longer than the timer.

    Raises
    ------
    ModelError
        FP538 for a mechanism the packet level does not model.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> valid = parse_spec({"cluster": {"gpus": 256}})
    >>> s = packet_spec_for(valid.technologies["infiniband"], valid.switches["infiniband"])
    >>> s.link_flow_control, s.congestion_control, s.routing, s.header_bytes, s.receiver
    ('credit', 'ib_cc', 'adaptive', 26, 'nic_reorder')
    >>> s = packet_spec_for(valid.technologies["roce_v2"], valid.switches["roce_v2"],
    ...     routing="flowlet")
    >>> s.routing, s.receiver, s.flowlet_gap_us > 0
    ('flowlet', 'in_order', True)
    >>> tomahawk = valid.switches["roce_v2"].model_copy(update={"asic": "Tomahawk 5"})
    >>> s = packet_spec_for(valid.technologies["roce_v2"], tomahawk, routing="adaptive")
    >>> s.routing, s.flowlet_gap_us
    ('flowlet', 256.0)
    """
    mechanisms = simulated_mechanisms(tech)
    # The ASIC's adaptive routing may place flowlets, not packets (Broadcom DLB in flowlet
    # mode): then what it asks of the switch is flowlet switching on its own timer.
    chosen = placed_routing(routing or default_routing(tech, switch), switch)
    adaptive = adaptive_routing_of(switch)
    fc = link_flow_control or mechanisms.link_flow_control
    # The shared vocabulary is wider than this level's models: refuse the rest (FP538).
    refuse_unmodelled(tech, "routing", chosen, get_args(PacketRouting))
    refuse_unmodelled(tech, "link_flow_control", fc, get_args(PacketFlowControl))
    cc = congestion_control or mechanisms.congestion_control
    refuse_unmodelled(tech, "congestion_control", cc, get_args(PacketCongestionControl))
    reassembly = tech.delivery == "in_order" and fc == "scheduled" and chosen in PER_PACKET_ROUTINGS
    spec = packet_spec(
        fc,
        cc,
        chosen,
        mtu_bytes=tech.mtu_bytes,
        header_bytes=int(tech.header_bytes.value),
        delivery=tech.delivery,
    )
    buffer = switch.buffer_bytes.value if switch.buffer_bytes is not None else None
    gap_ns = adaptive.flowlet_gap_ns
    cbfc = fc == "credit" and tech.switch_family == "ethernet"
    return replace(
        spec,
        switch_buffer_bytes=buffer,
        reorder_window_packets=(
            SUPERNIC_REORDER_WINDOW_PACKETS if tech.delivery == "nic_reorder" else 0
        ),
        packet_trimming=tech.packet_trimming and switch.packet_trimming,
        cell_bytes=int(tech.cell_bytes.value) if tech.cell_bytes is not None else 0,
        cell_header_bytes=(
            int(tech.cell_header_bytes.value) if tech.cell_header_bytes is not None else 0
        ),
        egress_reassembly=reassembly,
        link_level_retry=(
            tech.link_level_retry and switch.link_level_retry
            if link_level_retry is None
            else link_level_retry
        ),
        credit=CreditSpec(block_bytes=CBFC_CREDIT_BYTES) if cbfc else CreditSpec(),
        flowlet_gap_us=gap_ns / 1000.0 if gap_ns else FLOWLET_GAP_US,
    )
