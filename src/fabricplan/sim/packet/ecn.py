"""ECN marking at a switch egress queue (RED-style), the congestion point of DCQCN.

A data packet leaving a queue of ``q`` bytes is marked Congestion Experienced with probability
0 below ``kmin``, rising linearly to ``pmax`` at ``kmax``, and 1 above ``kmax`` (Floyd and
Jacobson, "Random Early Detection Gateways", ToN 1993, with ECN instead of drops, RFC 3168;
the DCQCN congestion point, Zhu et al. SIGCOMM 2015 §3.1). Marking happens at dequeue, on the
queue the packet has waited in, as the HPCC simulator's switch does.

Defaults are NVIDIA Cumulus ``nv set qos roce``: min 150,000 B, max 1,501,500 B, probability
100 % (docs/refs.md C.1).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.splitmix import uniform01
from fabricplan.sim.packet.state import PF_ECN_KMAX, PF_ECN_KMIN, PF_ECN_PMAX, SimState

ECN_KMIN_BYTES = 150_000
ECN_KMAX_BYTES = 1_501_500
ECN_PMAX = 1.0
"""NVIDIA Cumulus ``nv set qos roce`` lossless defaults (docs/refs.md C.1)."""


@dataclass(frozen=True)
class EcnSpec:
    """RED/ECN marking thresholds of every switch queue."""

    enabled: bool = True
    kmin_bytes: int = ECN_KMIN_BYTES
    kmax_bytes: int = ECN_KMAX_BYTES
    pmax: float = ECN_PMAX


def mark_probability(queue_bytes: float, spec: EcnSpec) -> float:
    """The RED marking probability for a queue of ``queue_bytes`` (readable form).

    >>> spec = EcnSpec(kmin_bytes=100, kmax_bytes=300, pmax=0.2)
    >>> [mark_probability(q, spec) for q in (50, 200, 400)]
    [0.0, 0.1, 1.0]
    """
    if queue_bytes <= spec.kmin_bytes:
        return 0.0
    if queue_bytes > spec.kmax_bytes:
        return 1.0
    return spec.pmax * (queue_bytes - spec.kmin_bytes) / (spec.kmax_bytes - spec.kmin_bytes)


@jit
def ecn_mark(s: SimState, queue_bytes: int) -> bool:
    """Draw whether a packet leaving a queue of ``queue_bytes`` is marked."""
    kmin = s.prm_f[PF_ECN_KMIN]
    if queue_bytes <= kmin:
        return False
    kmax = s.prm_f[PF_ECN_KMAX]
    if queue_bytes > kmax:
        return True
    prob = s.prm_f[PF_ECN_PMAX] * (queue_bytes - kmin) / (kmax - kmin)
    return bool(uniform01(s.rng) < prob)
