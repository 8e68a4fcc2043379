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
- **No congestion control** (``congestion_control: none`` or ``ecn: false``): PFC alone. The
  collective itself finishes 2-14 % *sooner* in these single-job runs (DCQCN with ConnectX
  defaults overshoots below the fair share, docs/cross_validation.md), so its time is left
  unchanged (x1.0); what it costs is pause spreading to other traffic (a victim flow beside an
  incast), which the step of one job does not show and which is said in the notes.
- **PFC watchdog off**: no effect while nothing storms; it decides how long a stuck NIC's pause
  storm lasts (configuration risk), not a collective's time.

Contention scales the effect: with the leaf ``oversubscription`` o, the share of the measured
3:1 effect is ``(1 - 1/o) / (1 - 1/3)`` (0 at 1:1, 1 at 3:1, held at 1 beyond: measured at 3:1
only); on a non-blocking fabric only hashed routing contends, with the measured non-blocking
factors. Adaptive routing on a non-blocking fabric has no contention to lose packets to.

>>> effect = lossless_effect(False, True, "dcqcn", False, 3.0, "ecmp")
>>> effect.all_to_all, effect.ring
(1.483, 1.308)
>>> lossless_effect(True, True, "dcqcn", False, 1.0, "adaptive").all_to_all
1.0
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.model.results import CollectivePoint, StepTimeResult

MEASURED_OVERSUBSCRIPTION = 3.0
"""Leaf oversubscription of the contended packet runs."""

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


@dataclass(frozen=True, slots=True)
class LosslessEffect:
    """Multipliers on the fabric time of all_to_all-like and ring-like traffic, and why."""

    all_to_all: float
    ring: float
    notes: tuple[str, ...]

    @property
    def neutral(self) -> bool:
        return self.all_to_all == 1.0 and self.ring == 1.0


def _contention_share(oversubscription: float) -> float:
    if oversubscription <= 1.0:
        return 0.0
    share = (1.0 - 1.0 / oversubscription) / (1.0 - 1.0 / MEASURED_OVERSUBSCRIPTION)
    return min(1.0, share)


def _factor(
    oversubscribed: float, nonblocking: float, oversubscription: float, routing: str
) -> float:
    base = 1.0 if routing == "adaptive" else nonblocking
    share = _contention_share(oversubscription)
    return round(base + share * (oversubscribed - base), 6)


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
        ``ecmp``, ``static`` or ``adaptive``.
    """
    notes: list[str] = []
    a2a = ring = 1.0
    if not pfc:
        a2a = _factor(
            LOSSY_ALL_TO_ALL_OVERSUBSCRIBED, LOSSY_ALL_TO_ALL_NONBLOCKING, oversubscription, routing
        )
        ring = _factor(LOSSY_RING_OVERSUBSCRIBED, LOSSY_RING_NONBLOCKING, oversubscription, routing)
        notes.append(
            f"PFC off on the RoCE priority: drops and go-back-N, all_to_all x{a2a:.3f}, rings"
            f" x{ring:.3f} at {oversubscription:g}:1 with {routing} routing (packet level)"
        )
    elif not headroom_ok:
        a2a = _factor(
            SHORT_HEADROOM_ALL_TO_ALL_OVERSUBSCRIBED,
            SHORT_HEADROOM_ALL_TO_ALL_NONBLOCKING,
            oversubscription,
            routing,
        )
        ring = _factor(
            SHORT_HEADROOM_RING_OVERSUBSCRIBED,
            SHORT_HEADROOM_RING_NONBLOCKING,
            oversubscription,
            routing,
        )
        notes.append(
            f"PFC headroom below what the cable needs: the lossless priority drops, all_to_all"
            f" x{a2a:.3f}, rings x{ring:.3f} at {oversubscription:g}:1 (packet level)"
        )
    if congestion_control == "none":
        notes.append(
            "no congestion control (DCQCN or ECN off): PFC alone; the job's own collectives are"
            " not slower at the packet level, but pauses spread to other traffic (a victim flow"
            " beside an incast is held to the incast's share); not priced"
        )
    if watchdog_off:
        notes.append(
            "PFC watchdog off: a stuck NIC's pause storm is not broken; no cost while nothing"
            " storms (it lengthens the configuration-risk incidents, not a collective)"
        )
    return LosslessEffect(a2a, ring, tuple(notes))


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
