"""What the deployed lossless Ethernet configuration costs the workload's traffic.

The analytic collective model assumes the catalog's mechanisms work as intended: PFC on the RoCE
priority on every hop, headroom sized for the cable, ECN marking with DCQCN. A fabric whose
``fabric.lossless`` (or whose real configuration, ``compare --config``) says otherwise pays what
the packet-level simulator measures for that setting on contended traffic. The constants are
completion-time ratios to the catalog configuration, from ``benchmarks/lossless_effect.py`` on
the cross-validation fabrics (128 hosts, generic 100G switches, ECMP, seed 1; docs/models.md,
"Lossless configuration", has the table and the command):

- **PFC off** (lossy RoCE): tail drops and go-back-N. all_to_all on a 3:1 leaf x1.483
  (99,342 drops); a permutation (one flow per NIC, as a ring) on a 3:1 leaf x1.308; on a
  non-blocking fabric the all_to_all drops nothing (x1.000) and a hashed permutation x
  :data:`LOSSY_RING_NONBLOCKING`.
- **PFC headroom too small** (``pfc_headroom_bytes`` below what the cable needs): the lossless
  priority overflows and drops anyway, with pauses on top: all_to_all on a 3:1 leaf x1.720,
  permutation x1.065 there and x1.235 on a non-blocking ECMP fabric (collisions queue).
- **No congestion control** (``congestion_control: none`` or ``ecn: false``): PFC alone, so a
  congested egress pauses its upstream instead of slowing the senders, and pauses spread. The
  measured effect on the workload's traffic is carried as it is, both ways: hashed rings on a
  non-blocking ECMP fabric x1.037 (the collisions' pauses reach the senders sharing a leaf),
  all_to_all x0.998; at a 3:1 leaf all_to_all x0.981 and rings x0.859, *sooner*, because DCQCN
  with ConnectX defaults cuts below the fair share there (docs/cross_validation.md; Meta runs
  its RoCE training fabrics with DCQCN off, Gangidi et al., SIGCOMM 2024). The victim flow
  beside an incast was x0.923: in one job's traffic the spreading costs nothing measurable;
  another tenant's traffic is not modelled, and a NIC that stops receiving (a pause storm) is
  the watchdog's case. Not measured on top of PFC off or a short headroom, so not applied there.
- **PFC watchdog off**: no effect on a collective while nothing storms; it decides how long a
  stuck NIC's pause storm stops the fabric, priced as a risk (:mod:`.config_risk`,
  :func:`~fabricplan.analytic.config_risk.pause_storm_risk`).

Contention changes the effect, and not monotonically: the packet runs at a 1:1, 2:1 and 3:1
leaf give each factor at those three points (PFC off: all_to_all x1.000, x1.608, x1.483; rings
x1.000, x0.966, x1.308). Between two runs the factor is linear in the oversubscription, beyond
3:1 it is held at the 3:1 run, and every note says which (measured, linear between runs, or
held). An earlier rule scaled the 3:1 effect by the contention share ``(1 - 1/o) / (1 - 1/3)``;
the 2:1 runs refuted it (it gave all_to_all x1.362 and rings x1.231 where the runs measure x1.608
and x0.966). On a non-blocking fabric only hashed routing contends, with the measured
non-blocking factors; per-packet routing (adaptive, spray) there has no contention to lose
packets to, and neither has a fabric whose planes are each one switch (one path per flow, no
uplink: :data:`ONE_SWITCH_PATHS`).

The technologies whose link layer is not PFC pay for congestion by their own mechanisms, each a
closed form here:

- **A victim beside an incast** (:func:`victim_share`): PFC and credits hold every flow behind
  a congested egress until congestion control has slowed the incast
  (:func:`congestion_settle_us`); a VOQ fabric queues each egress port's packets apart at the
  ingress, so the victim never waits; a lossy fabric drops or trims only the incast's packets.
- **An overflow** (:func:`overflow_recovery_ns`): with packet trimming the header still
  reaches the receiver, which NACKs at once: one round trip, never a timeout; without it a lost
  tail packet waits for the sender's retransmission timer.

>>> effect = lossless_effect(False, True, "dcqcn", False, 3.0, "ecmp")
>>> effect.all_to_all, effect.ring
(1.483, 1.308)
>>> lossless_effect(True, True, "dcqcn", False, 1.0, "adaptive").all_to_all
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricplan.model.results import CollectivePoint, StepTimeResult
from fabricplan.units import serialization_ns

MEASURED_OVERSUBSCRIPTION = 3.0
"""Highest leaf oversubscription of the contended packet runs (also run at 2:1 and 1:1)."""

LOSSY_ALL_TO_ALL_OVERSUBSCRIBED = 1.483
"""all_to_all 8 MB per rank, 128 hosts, 3:1 leaf, PFC off: 3,042.8 µs vs 2,052.0 µs."""
LOSSY_RING_OVERSUBSCRIBED = 1.308
"""Permutation 4 MB (one flow per NIC), 3:1 leaf, PFC off: 2,986.5 µs vs 2,283.6 µs."""
LOSSY_ALL_TO_ALL_NONBLOCKING = 1.000
"""all_to_all 8 MB per rank, non-blocking three tiers, ECMP, PFC off: 812.3 µs both ways."""
LOSSY_RING_NONBLOCKING = 1.000
"""Permutation 4 MB, non-blocking three tiers, ECMP, PFC off: 1,594.7 µs both ways (no drop)."""
SHORT_HEADROOM_ALL_TO_ALL_OVERSUBSCRIBED = 1.720
"""all_to_all 8 MB per rank, 3:1 leaf, 2 KiB headroom: 3,528.4 µs vs 2,052.0 µs."""
SHORT_HEADROOM_RING_OVERSUBSCRIBED = 1.065
"""Permutation 4 MB, 3:1 leaf, 2 KiB headroom: 2,432.1 µs vs 2,283.6 µs."""
SHORT_HEADROOM_RING_NONBLOCKING = 1.235
"""Permutation 4 MB, non-blocking three tiers, ECMP, 2 KiB headroom: 1,969.6 µs vs 1,594.7 µs
(470 drops where ECMP collisions queue)."""
SHORT_HEADROOM_ALL_TO_ALL_NONBLOCKING = 1.000
"""all_to_all 8 MB per rank, non-blocking three tiers, 2 KiB headroom: 812.3 µs both ways."""
LOSSY_ALL_TO_ALL_TWO_TO_ONE = 1.608
"""all_to_all 8 MB per rank, 2:1 leaf, PFC off: 2,345.9 µs vs 1,459.1 µs (26,450 drops)."""
LOSSY_RING_TWO_TO_ONE = 0.966
"""Permutation 4 MB, 2:1 leaf, PFC off: 1,854.9 µs vs 1,920.5 µs (no drop; no pause either)."""
SHORT_HEADROOM_ALL_TO_ALL_TWO_TO_ONE = 1.466
"""all_to_all 8 MB per rank, 2:1 leaf, 2 KiB headroom: 2,139.3 µs vs 1,459.1 µs."""
SHORT_HEADROOM_RING_TWO_TO_ONE = 1.195
"""Permutation 4 MB, 2:1 leaf, 2 KiB headroom: 2,295.8 µs vs 1,920.5 µs."""
NO_CC_ALL_TO_ALL_TWO_TO_ONE = 0.981
"""all_to_all 8 MB per rank, 2:1 leaf, no congestion control: 1,431.8 µs vs 1,459.1 µs."""
NO_CC_RING_TWO_TO_ONE = 0.862
"""Permutation 4 MB, 2:1 leaf, no congestion control: 1,654.6 µs vs 1,920.5 µs."""
NO_CC_ALL_TO_ALL_OVERSUBSCRIBED = 0.981
"""all_to_all 8 MB per rank, 3:1 leaf, PFC without congestion control: 2,013.7 µs vs 2,052.0 µs."""
NO_CC_RING_OVERSUBSCRIBED = 0.859
"""Permutation 4 MB, 3:1 leaf, PFC without congestion control: 1,961.5 µs vs 2,283.6 µs."""
NO_CC_ALL_TO_ALL_NONBLOCKING = 0.998
"""all_to_all 8 MB per rank, non-blocking three tiers, no congestion control: 811.0 µs vs
812.3 µs."""
NO_CC_RING_NONBLOCKING = 1.037
"""Permutation 4 MB, non-blocking three tiers, ECMP, no congestion control: 1,654.3 µs vs
1,594.7 µs (ECMP collisions pause the senders that share them)."""


ONE_SWITCH_PATHS = "one-switch"
"""What stands for the routing of a fabric whose planes are each one switch: every flow has one
path (NIC, switch, NIC), so there is no path to hash onto and no uplink to share."""
PER_PACKET_ROUTINGS = frozenset({"adaptive", "spray", ONE_SWITCH_PATHS})
"""Routings that spread every packet (or have one path only): no hash collision queues on a
non-blocking fabric."""

RC_RETRANSMIT_TIMEOUT_NS = 4.096e3 * 2**20
"""Retransmission timer of an NCCL RC queue pair, ns: ``4.096 us x 2**timeout`` (IBTA Vol. 1
9.7.6.1.3, local ACK timeout) with NCCL's ``NCCL_IB_TIMEOUT`` default 20 (NVIDIA/nccl
src/transport/net_ib.cc, ``NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 20)``): 4.29 s. A lost packet
with nothing behind it (the tail of a message) is found only when it expires."""
UET_RETRANSMIT_TIMEOUT_NS = 1.0e6
"""Retransmission timer of an Ultra Ethernet packet delivery context, ns (estimate: 1 ms; UE
Specification 1.0 leaves the value to the implementation; fine-grained data-centre timers are
of the order of a millisecond or below, Vasudevan et al., "Safe and effective fine-grained TCP
retransmissions for datacenter communication", SIGCOMM 2009)."""

DCQCN_CNP_INTERVAL_US = 50.0
"""Shortest gap between two CNPs to one sender, us (Zhu et al., "Congestion Control for
Large-Scale RDMA Deployments", SIGCOMM 2015, parameter N = 50 us): each CNP can at most halve
the rate, so slowing N senders to 1/N of the line takes ``log2(N)`` of them."""
IB_CC_REACTION_US = 10.0
"""Time between two rate cuts of an InfiniBand CC sender, us (estimate: a BECN per marked
packet returns within a round trip, and each raises the CCT index by ``CCTI_Increase``; the
IBTA Vol. 1 annex A10 leaves the table and timer to the subnet manager's policy)."""
TELEMETRY_CC_RTTS = 2.0
"""Round trips a telemetry-driven rate control needs to settle: one for the switches' in-band
telemetry to reach the sender, one for the new rate to reach the queue. Basis: HPCC (Li et al.,
SIGCOMM 2019) sets the window from the INT utilisation each round trip; NVIDIA publishes no
Spectrum-X CC algorithm, so this is an estimate for it. Used for ``spectrum_x_cc``."""
NSCC_RTTS = 2.0
"""Round trips UEC NSCC needs to settle after an incast starts (estimate: UE Specification 1.0
NSCC reacts per acknowledgement to ECN, delay and trims; on a trim its quick adapt sets the
window to what was acknowledged over the last base RTT plus target delay (the UEC's reference
model, uet-htsim htsim/sim/uec.cpp ``UecSrc::quick_adapt``): one round trip to see it, one to
take effect)."""


def congestion_settle_us(
    congestion_control: str, senders: int, rtt_us: float, request_grant_us: float = 0.0
) -> float:
    """Time from the start of an ``senders``-to-1 incast until its senders run at their share.

    - ``dcqcn``: ``ceil(log2 N)`` CNPs, one per :data:`DCQCN_CNP_INTERVAL_US`;
    - ``ib_cc``: ``ceil(log2 N)`` cuts, one per :data:`IB_CC_REACTION_US`;
    - ``spectrum_x_cc``: :data:`TELEMETRY_CC_RTTS` round trips; ``uec_nscc``: :data:`NSCC_RTTS`;
    - ``voq_scheduled``: one request/grant round trip (the egress never grants more than its
      port takes, so there is nothing to overshoot);
    - ``none``: never (``inf``).

    >>> congestion_settle_us("dcqcn", 8, 5.0)          # three halvings
    150.0
    >>> congestion_settle_us("voq_scheduled", 8, 5.0, request_grant_us=1.5)
    1.5
    >>> congestion_settle_us("none", 8, 5.0)
    inf
    """
    halvings = math.ceil(math.log2(max(2, senders)))
    if congestion_control == "dcqcn":
        return halvings * DCQCN_CNP_INTERVAL_US
    if congestion_control == "ib_cc":
        return halvings * IB_CC_REACTION_US
    if congestion_control == "spectrum_x_cc":
        return TELEMETRY_CC_RTTS * rtt_us
    if congestion_control == "uec_nscc":
        return NSCC_RTTS * rtt_us
    if congestion_control == "voq_scheduled":
        return request_grant_us
    return math.inf


def victim_share(
    link_flow_control: str, incast_senders: int, settle_us: float, duration_us: float
) -> float:
    """Share of its line rate a victim flow gets while an incast runs beside it.

    The victim enters the same switch as the incast's senders but leaves by another egress.
    With ``pfc`` or ``credit`` the congested egress stops the shared ingress (pause, or no
    credit): the victim's packets wait in the same ingress queue behind the incast's, so until
    congestion control has settled the victim moves at the incast flows' share, ``1/N`` of the
    line (head-of-line blocking); after that the queue drains and it runs at line rate. A
    ``scheduled`` (VOQ) fabric holds each egress port's packets in their own queue at the
    ingress and sends only what that egress granted: the victim's egress is free, so it never
    waits. ``none`` (lossy, with or without trimming) drops or trims the incast's packets at
    its own egress and stops nobody else.

    Parameters
    ----------
    link_flow_control
        ``pfc``, ``credit``, ``scheduled`` or ``none``.
    incast_senders
        Senders of the incast (``N``).
    settle_us
        :func:`congestion_settle_us` of the technology.
    duration_us
        How long the victim's transfer lasts.

    Returns
    -------
    float
        The victim's mean rate over ``duration_us`` as a share of its line rate.

    Examples
    --------
    >>> victim_share("scheduled", 16, 1.0, 100.0)
    1.0
    >>> victim_share("pfc", 4, math.inf, 100.0)     # no CC: held to the incast's share
    0.25
    >>> victim_share("pfc", 4, 50.0, 100.0)         # half the time at 1/4, then line rate
    0.625
    """
    if link_flow_control not in ("pfc", "credit") or incast_senders <= 1 or duration_us <= 0:
        return 1.0
    blocked = min(1.0, settle_us / duration_us)
    return blocked / incast_senders + (1.0 - blocked)


def overflow_recovery_ns(
    packet_trimming: bool,
    delivery: str,
    rtt_ns: float,
    header_bytes: float,
    link_speed_gbps: float,
    tail: bool = True,
) -> float:
    """What one packet overflowing a switch queue costs its flow, ns of lost progress.

    With trimming the switch forwards the header (``header_bytes`` on the wire); the receiver
    NACKs it at once and the sender resends that packet: one round trip, at the tail of a
    message too. Without trimming the packet is gone: a tail loss (nothing behind it reveals
    the gap) waits for the retransmission timer (:data:`RC_RETRANSMIT_TIMEOUT_NS` for RC,
    :data:`UET_RETRANSMIT_TIMEOUT_NS` for an unordered UET transport); a loss with packets
    behind it is seen as a gap within a round trip: an unordered transport resends the one
    packet, an RC sender goes back N and resends its whole window (one bandwidth-delay
    product, one more round trip at line rate).

    Examples
    --------
    >>> trimmed = overflow_recovery_ns(True, "out_of_order", 5000.0, 64, 400.0)
    >>> timed_out = overflow_recovery_ns(False, "out_of_order", 5000.0, 64, 400.0)
    >>> trimmed, timed_out                          # one RTT + a 64 B header; the timer
    (5001.28, 1000000.0)
    >>> overflow_recovery_ns(False, "in_order", 5000.0, 64, 400.0, tail=False)   # go-back-N
    10000.0
    """
    if packet_trimming:
        return rtt_ns + serialization_ns(header_bytes, link_speed_gbps)
    if tail:
        return UET_RETRANSMIT_TIMEOUT_NS if delivery == "out_of_order" else RC_RETRANSMIT_TIMEOUT_NS
    if delivery == "out_of_order":
        return rtt_ns
    return 2.0 * rtt_ns


def corruption_recovery_ns(
    link_level_retry: bool, link_rtt_ns: float, end_to_end_recovery_ns: float
) -> float:
    """What a frame corrupted on one link costs, ns: with link-level retry (UEC LLR) the link
    resends it from its own replay buffer after one link round trip; without it the next hop
    drops it at the FCS check (nothing to trim) and the transport recovers it end to end
    (:func:`overflow_recovery_ns` without trimming).

    >>> corruption_recovery_ns(True, 100.0, 4.3e9), corruption_recovery_ns(False, 100.0, 4.3e9)
    (100.0, 4300000000.0)
    """
    return link_rtt_ns if link_level_retry else end_to_end_recovery_ns


def timer_found_loss_us(expected_losses: float, duration_us: float, timeout_us: float) -> float:
    """Expected time a transfer of ``duration_us`` ends later when each of its losses is found
    only by a retransmission timer of ``timeout_us``, the losses falling at random (Poisson)
    times over the transfer with mean count ``expected_losses``.

    The sender keeps sending while a timer runs, so only the last loss matters: the transfer
    ends at ``max(T, t_last + RTO)``. With ``λ = E / T`` the gap ``g = T - t_last`` has density
    ``λ e^(-λ g)`` on ``[0, T]`` (no loss at all with ``e^-E``), so the expected delay is
    ``∫_0^m (RTO - g) λ e^(-λ g) dg`` with ``m = min(RTO, T)``:
    ``RTO (1 - e^(-λm)) - (1 - e^(-λm)) / λ + m e^(-λm)``. Many losses: one RTO; few, on a
    transfer much shorter than the timer: ``(1 - e^-E) RTO``.

    >>> round(timer_found_loss_us(50.0, 100.0, 1000.0), 1)      # surely a loss near the end
    998.0
    >>> round(timer_found_loss_us(1.0, 10.0, 1000.0), 1)        # (1 - 1/e) (1000 - 10) + 10 / e
    629.5
    >>> timer_found_loss_us(0.0, 10.0, 1000.0)
    0.0
    """
    if expected_losses <= 0.0 or timeout_us <= 0.0:
        return 0.0
    if duration_us <= 0.0:
        return (1.0 - math.exp(-expected_losses)) * timeout_us
    rate = expected_losses / duration_us
    m = min(timeout_us, duration_us)
    caught = -math.expm1(-rate * m)
    return max(0.0, timeout_us * caught - caught / rate + m * math.exp(-rate * m))


@dataclass(frozen=True, slots=True)
class LinkErrorExposure:
    """How many frame crossings of links one collective makes, for :func:`link_error_delay_us`."""

    crossings: float
    """Frames of the whole collective times the links each crosses."""
    critical_crossings: float
    """Frames of the longest flow times its links (the flow the collective waits for)."""
    tail_crossings: float
    """Every flow's last frame times its links (a loss no later frame reveals)."""
    duration_us: float
    """How long the collective's transfer lasts without errors."""
    path_links: float = 1.0
    """Links one frame crosses (host links included)."""


RESEND_ROUNDS = 3
"""Timer rounds counted for resends corrupted again (each round's expected losses are the last
round's times ``ratio x links``, at most 1e-3 x a few links: three rounds leave under 1e-6 of a
timer out)."""


def link_error_delay_us(
    frame_error_ratio: float,
    exposure: LinkErrorExposure,
    link_level_retry: bool,
    delivery: str,
    replay_us: float,
    round_trip_us: float,
    timeout_us: float,
) -> float:
    """Expected time link errors add to a collective, µs.

    Every frame crossing a link arrives corrupted with probability ``frame_error_ratio``:

    - with link-level retry (UE Specification 1.0, link layer, LLR) the link replays it itself:
      the frame and the ones held behind it wait ``replay_us`` (one link round trip and one
      frame, :func:`corruption_recovery_ns`); the collective waits for those on its longest
      flow, ``ratio x critical_crossings x replay_us``;
    - without it the frame is dropped at the FCS check (nothing is left to trim) and the
      transport recovers it. An unordered transport that does not NACK (``out_of_order``:
      UET RUD selective repeat, no trimmed header to NACK) finds every such loss by its timer
      (:func:`timer_found_loss_us` over all ``crossings``, then once more for each round of resends
    corrupted again); an RC receiver (``in_order``,
      ``nic_reorder``) sees a gap when the next frame arrives and NAKs it: go-back-N costs the
      longest flow two round trips per loss on it, and a flow's last frame, which nothing
      follows, waits for the timer.

    The packet level runs the same frames through its links (``FaultSpec.frame_error_ratio``,
    :mod:`fabricplan.sim.packet.llr`); tests/test_levels_agree.py holds this form to it.

    >>> e = LinkErrorExposure(crossings=1e6, critical_crossings=1e4, tail_crossings=100,
    ...     duration_us=500.0, path_links=4)
    >>> round(link_error_delay_us(1e-5, e, True, "out_of_order", 2.0, 10.0, 1000.0), 3)
    0.2
    >>> round(link_error_delay_us(1e-5, e, False, "out_of_order", 2.0, 10.0, 1000.0), 1)
    950.4
    >>> round(link_error_delay_us(1e-5, e, False, "in_order", 2.0, 10.0, 1000.0), 2)
    3.0
    """
    if frame_error_ratio <= 0.0:
        return 0.0
    if link_level_retry:
        return frame_error_ratio * exposure.critical_crossings * replay_us
    if delivery == "out_of_order":
        losses = frame_error_ratio * exposure.crossings
        delay = timer_found_loss_us(losses, exposure.duration_us, timeout_us)
        # The frames resent after a timeout cross the same links: a corrupted resend is found
        # one timer later again (each round is short beside the timer).
        for _ in range(RESEND_ROUNDS):
            losses *= frame_error_ratio * exposure.path_links
            delay += -math.expm1(-losses) * timeout_us
        return delay
    go_back = frame_error_ratio * exposure.critical_crossings * 2.0 * round_trip_us
    tail = -math.expm1(-frame_error_ratio * exposure.tail_crossings) * timeout_us
    return go_back + tail


@dataclass(frozen=True, slots=True)
class SettingEffect:
    """What one deployed setting alone does to the workload's traffic."""

    setting: str
    """The setting in words (``PFC off on the RoCE priority``)."""
    all_to_all: float
    ring: float


@dataclass(frozen=True, slots=True)
class LosslessEffect:
    """Multipliers on the fabric time of all_to_all-like and ring-like traffic, and why."""

    all_to_all: float
    ring: float
    notes: tuple[str, ...]
    settings: tuple[SettingEffect, ...] = ()
    """Each setting that differs from the catalog's, with its own multipliers (their product is
    ``all_to_all``, ``ring``); the watchdog is listed at x1 (its cost is a risk)."""

    @property
    def neutral(self) -> bool:
        return self.all_to_all == 1.0 and self.ring == 1.0


PFC_OFF = "PFC off on the RoCE priority"
SHORT_HEADROOM = "PFC headroom below what the cable needs"
NO_CC = "no congestion control (DCQCN or ECN off)"
WATCHDOG_OFF = "PFC watchdog off"


def _regime(oversubscription: float) -> str:
    """Where the factor sits against the measured points (said with every factor)."""
    if oversubscription <= 1.0:
        return ", measured non-blocking"
    if oversubscription >= MEASURED_OVERSUBSCRIPTION:
        return ", measured at 3:1" + (
            f"; held there at {oversubscription:g}:1" if oversubscription > 3.0 else ""
        )
    if oversubscription == 2.0:
        return ", measured at 2:1"
    return f", linear at {oversubscription:g}:1 between the runs at 1:1, 2:1 and 3:1"


def _factor(
    nonblocking: float,
    two_to_one: float,
    three_to_one: float,
    oversubscription: float,
    routing: str,
) -> float:
    """The measured factor at the leaf's oversubscription: the runs at 1:1, 2:1 and 3:1, linear
    between two neighbouring runs, held at 3:1 beyond. Per-packet routing on a non-blocking
    fabric has nothing to collide on (1.0); the 2:1 and 3:1 runs hash (ECMP), which matters
    little where the uplinks themselves are short of capacity."""
    low = 1.0 if routing in PER_PACKET_ROUTINGS else nonblocking
    if oversubscription <= 1.0:
        value = low
    elif oversubscription <= 2.0:
        value = low + (oversubscription - 1.0) * (two_to_one - low)
    elif oversubscription < MEASURED_OVERSUBSCRIPTION:
        value = two_to_one + (oversubscription - 2.0) * (three_to_one - two_to_one)
    else:
        value = three_to_one
    return round(value, 6)


def lossless_effect(
    pfc: bool,
    headroom_ok: bool,
    congestion_control: str,
    watchdog_off: bool,
    oversubscription: float,
    routing: str,
) -> LosslessEffect:
    """The multipliers for one fabric's lossless configuration (see the module docstring).

    Parameters
    ----------
    pfc
        PFC on the RoCE priority on every hop.
    headroom_ok
        The configured headroom covers what the cable needs (``auto`` always does).
    congestion_control
        ``dcqcn`` or ``none`` (``none`` also when ECN marking is off).
    watchdog_off
        The PFC watchdog is off.
    oversubscription
        The leaf's downlinks : uplinks.
    routing
        ``ecmp``, ``static``, ``flowlet`` (hashed like ECMP), ``adaptive`` or ``spray``.
    """
    notes: list[str] = []
    settings: list[SettingEffect] = []
    if not pfc:
        a2a = _factor(
            LOSSY_ALL_TO_ALL_NONBLOCKING,
            LOSSY_ALL_TO_ALL_TWO_TO_ONE,
            LOSSY_ALL_TO_ALL_OVERSUBSCRIBED,
            oversubscription,
            routing,
        )
        ring = _factor(
            LOSSY_RING_NONBLOCKING,
            LOSSY_RING_TWO_TO_ONE,
            LOSSY_RING_OVERSUBSCRIBED,
            oversubscription,
            routing,
        )
        settings.append(SettingEffect(PFC_OFF, a2a, ring))
        notes.append(
            f"{PFC_OFF}: drops and go-back-N, all_to_all x{a2a:.3f}, rings"
            f" x{ring:.3f} at {oversubscription:g}:1 with {routing} routing (packet level"
            f"{_regime(oversubscription)})"
        )
    elif not headroom_ok:
        a2a = _factor(
            SHORT_HEADROOM_ALL_TO_ALL_NONBLOCKING,
            SHORT_HEADROOM_ALL_TO_ALL_TWO_TO_ONE,
            SHORT_HEADROOM_ALL_TO_ALL_OVERSUBSCRIBED,
            oversubscription,
            routing,
        )
        ring = _factor(
            SHORT_HEADROOM_RING_NONBLOCKING,
            SHORT_HEADROOM_RING_TWO_TO_ONE,
            SHORT_HEADROOM_RING_OVERSUBSCRIBED,
            oversubscription,
            routing,
        )
        settings.append(SettingEffect(SHORT_HEADROOM, a2a, ring))
        notes.append(
            f"{SHORT_HEADROOM}: the lossless priority drops, all_to_all"
            f" x{a2a:.3f}, rings x{ring:.3f} at {oversubscription:g}:1 (packet level"
            f"{_regime(oversubscription)})"
        )
    if congestion_control == "none":
        if settings:
            notes.append(
                f"{NO_CC}: not measured on top of {settings[0].setting.lower()}, so not applied"
            )
        else:
            a2a = _factor(
                NO_CC_ALL_TO_ALL_NONBLOCKING,
                NO_CC_ALL_TO_ALL_TWO_TO_ONE,
                NO_CC_ALL_TO_ALL_OVERSUBSCRIBED,
                oversubscription,
                routing,
            )
            ring = _factor(
                NO_CC_RING_NONBLOCKING,
                NO_CC_RING_TWO_TO_ONE,
                NO_CC_RING_OVERSUBSCRIBED,
                oversubscription,
                routing,
            )
            settings.append(SettingEffect(NO_CC, a2a, ring))
            notes.append(
                f"{NO_CC}: PFC alone, pauses spread instead of rates falling: all_to_all"
                f" x{a2a:.3f}, rings x{ring:.3f} at {oversubscription:g}:1 with {routing} routing"
                f" (packet level{_regime(oversubscription)}; below 1 where DCQCN with ConnectX"
                " defaults cuts below the fair share; a victim flow beside an incast measured"
                " x0.923; other tenants' traffic not modelled)"
            )
    if watchdog_off:
        settings.append(SettingEffect(WATCHDOG_OFF, 1.0, 1.0))
        notes.append(
            f"{WATCHDOG_OFF}: a stuck NIC's pause storm is not broken; no effect on a"
            " collective while nothing storms, priced as pause-storm risk (configuration risk)"
        )
    a2a = math.prod((e.all_to_all for e in settings), start=1.0)
    ring = math.prod((e.ring for e in settings), start=1.0)
    return LosslessEffect(round(a2a, 6), round(ring, 6), tuple(notes), tuple(settings))


def with_lossless_step(step: StepTimeResult, effect: LosslessEffect) -> StepTimeResult:
    """``step`` with the effect on its exposed fabric communication: the expert-parallel
    all_to_all part at the all_to_all factor, the rest (rings, pipeline sends) at the ring
    factor; NVLink-only time is untouched. The added time is taken as exposed (no overlap).

    Examples
    --------
    >>> step = StepTimeResult(compute_s=1.0, comm_total_s=0.4, comm_exposed_s=0.2, step_s=1.2,
    ...     comm_by_dimension_s={"ep": 0.1, "dp": 0.3}, exposed_fraction=0.2 / 1.2,
    ...     gpu_hours_lost_per_year=0.0)
    >>> round(with_lossless_step(step, LosslessEffect(1.5, 1.2, ())).step_s, 6)  # +0.05 +0.02
    1.27
    """
    if effect.neutral:
        return step
    fabric = step.comm_exposed_fabric_s
    ep = min(step.comm_by_dimension_s.get("ep", 0.0), fabric)
    extra = (effect.all_to_all - 1.0) * ep + (effect.ring - 1.0) * (fabric - ep)
    exposed = step.comm_exposed_s + extra
    total = step.step_s + extra
    hours_per_second = (
        step.gpu_hours_lost_per_year / step.comm_exposed_s if step.comm_exposed_s else 0.0
    )
    gpus_hours = hours_per_second * step.step_s  # GPUs x hours a year
    return step.model_copy(
        update={
            "comm_exposed_s": exposed,
            "step_s": total,
            "exposed_fraction": exposed / total,
            "gpu_hours_lost_per_year": exposed / total * gpus_hours if gpus_hours else 0.0,
            "assumptions": (*step.assumptions, *effect.notes),
        }
    )


def with_lossless_points(
    points: tuple[CollectivePoint, ...], effect: LosslessEffect
) -> tuple[CollectivePoint, ...]:
    """nccl-tests rows with the effect: all_to_all at its factor, the rest at the ring factor."""
    if effect.neutral:
        return points
    out = []
    for p in points:
        f = effect.all_to_all if p.collective == "all_to_all" else effect.ring
        out.append(
            p.model_copy(
                update={
                    "time_us": p.time_us * f,
                    "algbw_GBps": p.algbw_GBps / f,
                    "busbw_GBps": p.busbw_GBps / f,
                }
            )
        )
    return tuple(out)
