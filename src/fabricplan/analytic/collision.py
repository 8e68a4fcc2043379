"""Hash collisions: what static/ECMP routing costs a synchronous collective.

A switch stage with ``paths`` equal next hops (a leaf's uplinks, a spine's downlinks towards one
leaf) and ``flows`` long-lived flows hashed onto them is the classic *balls into bins* problem:
every flow picks a path uniformly at random and independently (a per-flow 5-tuple hash, or a static
per-destination route over a pattern the route tables were not built for). A collective finishes
when its slowest flow does, and the slowest flow sits on the most loaded path. Per-packet routing
(adaptive routing that places each packet: IB AR, Spectrum-X AR; and spraying of packets or
cells over every equal-cost link: UEC, a DDC cell fabric) spreads the load perfectly: the load per
path is ``flows / paths`` (:func:`adaptive_throughput`). Its cost is reordering: a receiver that
accepts packets only in order goes back N on every overtaking packet
(:func:`in_order_goodput_share`). Flowlet routing re-hashes a flow only after an idle gap longer
than the paths' skew; a long-lived NCCL flow has no such gap, so it is hashed once, like ECMP.

Each flow asks for ``demand_ratio`` of a path's capacity (a 400G NIC flow on a 400G uplink asks for
1.0; a NIC with two flows asks for 0.5 each). With ``M`` flows on the busiest path, the flows there
get ``min(demand, 1/M)`` of a path, so the collective takes ``max(1, demand_ratio * M)`` times its
unconstrained time. The throughput factor returned is the inverse of the expected slowdown.

The exact distribution of the maximum load uses Poissonisation (Mitzenmacher & Upfal,
*Probability and Computing*, 2nd ed., §5.4): for ``F`` balls in ``P`` bins,
``P(max <= k) = P(X_1..X_P <= k | sum X = F)`` with ``X_i`` i.i.d. Poisson(F/P). Above
:data:`EXACT_FLOW_LIMIT` flows the bins are treated as independent Poisson(F/P) variables, whose
error vanishes as F grows (Raab & Steger, "Balls into bins — a simple and tight analysis",
RANDOM 1998: the maximum is ``F/P + sqrt(2 (F/P) ln P)`` (1 + o(1)) for F >> P ln P).

>>> round(expected_max_load(2, 2), 6)   # two flows on two paths collide half the time
1.5
>>> round(hashed_throughput(2, 2, demand_ratio=1.0), 4)
0.6667
>>> adaptive_throughput(2, 2, demand_ratio=1.0)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

EXACT_FLOW_LIMIT = 256
"""Up to this many flows per stage the maximum load is computed exactly (O(F^2 log P))."""

_TAIL_TOLERANCE = 1e-13
"""Where a distribution's upper tail is cut: probabilities below this do not change a slowdown."""

FloatArray = npt.NDArray[np.float64]


def _log_factorials(kmax: int) -> FloatArray:
    values = np.zeros(kmax + 1)
    if kmax > 0:
        values[1:] = np.cumsum(np.log(np.arange(1, kmax + 1, dtype=np.float64)))
    return values


def _poisson_pmf(rate: float, kmax: int) -> FloatArray:
    """Poisson(rate) probabilities of 0..kmax."""
    k = np.arange(kmax + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_rate = math.log(rate) if rate > 0 else -math.inf
    log_pmf = k * log_rate - rate - _log_factorials(kmax)
    if rate == 0:
        log_pmf[0] = 0.0
    return np.exp(log_pmf)


def _truncated_power(poly: FloatArray, power: int, degree: int) -> FloatArray:
    """``poly ** power`` keeping coefficients up to ``degree`` (binary exponentiation)."""
    result = np.zeros(degree + 1)
    result[0] = 1.0
    base = poly[: degree + 1].copy()
    while power:
        if power & 1:
            result = np.convolve(result, base)[: degree + 1]
        power >>= 1
        if power:
            base = np.convolve(base, base)[: degree + 1]
    return result


def _exact_max_load_cdf(flows: int, paths: int) -> tuple[int, FloatArray]:
    """``(k0, cdf)`` with ``cdf[i] = P(max load <= k0 + i)`` for F balls in P bins, exactly."""
    rate = flows / paths
    pmf = _poisson_pmf(rate, flows)
    normaliser = float(_poisson_pmf(float(flows), flows)[flows])  # P(Poisson(F) = F)
    k0 = math.ceil(rate)
    values = []
    for k in range(k0, flows + 1):
        truncated = pmf.copy()
        truncated[k + 1 :] = 0.0
        value = min(1.0, float(_truncated_power(truncated, paths, flows)[flows]) / normaliser)
        values.append(value)
        if value >= 1.0 - _TAIL_TOLERANCE:
            break
    return k0, np.array(values)


def _approximate_max_load_cdf(flows: int, paths: int) -> tuple[int, FloatArray]:
    """``(k0, cdf)`` treating the P bins as independent Poisson(F/P) counts.

    Only loads from ``k0 = ceil(F/P)`` up matter (``P(max <= k)`` for ``k >= k0`` sums the
    probabilities above ``k``), so the Poisson probabilities are computed on that window alone,
    ``log k! = lgamma(k0 + 1) + sum(log j)``: at 50M flows on 64 paths a window of ~11k terms
    instead of ~800k.
    """
    rate = flows / paths
    k0 = math.ceil(rate)
    kmax = int(rate + 12.0 * math.sqrt(rate) + 24)
    k = np.arange(k0, kmax + 1, dtype=np.float64)
    log_factorial = math.lgamma(k0 + 1.0) + np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
    pmf = np.exp(k * math.log(rate) - rate - log_factorial)
    tail = np.cumsum(pmf[::-1])[::-1]  # tail[i] = P(k0 + i <= X <= kmax)
    upper = np.append(tail[1:], 0.0)  # P(X > k0 + i)
    with np.errstate(divide="ignore"):
        cdf = np.exp(paths * np.log1p(-np.minimum(upper, 1.0 - 1e-300)))
    return k0, cdf


def max_load_cdf(flows: int, paths: int) -> tuple[int, FloatArray]:
    """Distribution of the busiest path's load when ``flows`` are hashed onto ``paths``.

    Returns ``(k0, cdf)`` with ``cdf[i] = P(max load <= k0 + i)``; ``k0 = ceil(flows/paths)`` is
    the smallest possible maximum.

    >>> k0, cdf = max_load_cdf(3, 3)
    >>> k0, [round(float(p), 4) for p in cdf]   # all apart: 6/27; no triple: 24/27
    (1, [0.2222, 0.8889, 1.0])
    """
    if flows <= 0 or paths <= 0:
        return 0, np.array([1.0])
    if paths == 1:
        return flows, np.array([1.0])
    if flows <= EXACT_FLOW_LIMIT:
        return _exact_max_load_cdf(flows, paths)
    return _approximate_max_load_cdf(flows, paths)


def expected_max_load(flows: int, paths: int) -> float:
    """Expected number of flows on the busiest of ``paths`` when ``flows`` are hashed uniformly.

    Parameters
    ----------
    flows
        Long-lived flows crossing the stage.
    paths
        Equal-cost next hops (ECMP group members, parallel links included).

    Returns
    -------
    float
        E[max load]; ``flows / paths`` would be a perfect spread.

    Examples
    --------
    >>> round(expected_max_load(1, 8), 6)
    1.0
    >>> round(expected_max_load(8, 8), 3)
    2.597
    """
    k0, cdf = max_load_cdf(flows, paths)
    if flows <= 0:
        return 0.0
    below = np.concatenate(([0.0], cdf[:-1]))
    loads = k0 + np.arange(len(cdf))
    return float(np.sum(loads * (cdf - below)))


@lru_cache(maxsize=4096)  # a pure function of four numbers; a sweep asks the same ones often
def hashed_throughput(flows: int, paths: int, demand_ratio: float, stages: int = 1) -> float:
    """Throughput factor (0..1] of a synchronous collective whose flows are hashed onto paths.

    Parameters
    ----------
    flows
        Flows crossing each stage.
    paths
        Equal-cost paths at each stage.
    demand_ratio
        One flow's unconstrained rate as a share of one path's capacity.
    stages
        Independent hashing stages the flows cross (e.g. 2 for leaf -> spine -> leaf: the upward
        hash at the source leaf and the downward fan-in at the destination leaf); the busiest path
        over all stages limits the collective.

    Returns
    -------
    float
        ``1 / E[max(1, demand_ratio * M)]`` where ``M`` is the busiest path's load.

    Examples
    --------
    >>> round(hashed_throughput(1, 4, 1.0), 6)   # one flow never collides
    1.0
    >>> round(hashed_throughput(64, 64, 1.0, stages=2), 3)   # one full-rate flow per uplink
    0.23
    """
    if flows <= 0:
        return 1.0
    k0, cdf = max_load_cdf(flows, paths)
    cdf_all = cdf**stages
    below = np.concatenate(([0.0], cdf_all[:-1]))
    probability = cdf_all - below
    # Whatever mass the tail cut holds sits at the last load computed (a slight overestimate).
    probability[-1] += max(0.0, 1.0 - float(cdf_all[-1]))
    loads = k0 + np.arange(len(cdf_all))
    slowdown = float(np.sum(probability * np.maximum(1.0, demand_ratio * loads)))
    return 1.0 / slowdown


def adaptive_throughput(flows: int, paths: int, demand_ratio: float) -> float:
    """Throughput factor with adaptive routing: the load spreads evenly, ``flows / paths`` each.

    Only capacity can limit it (an oversubscribed stage), never collisions.

    >>> adaptive_throughput(64, 32, 1.0)   # twice the demand the uplinks carry
    0.5
    """
    if flows <= 0:
        return 1.0
    return 1.0 / max(1.0, demand_ratio * flows / paths)


def overtaking_share(paths: int) -> float:
    """Share of a sprayed flow's packets that arrive before the packet sent just ahead of them.

    Each packet takes one of ``paths`` equal-cost paths independently; with probability
    ``1 - 1/paths`` it takes another path than its predecessor, and on a loaded fabric (queue
    delays differing by more than one packet time) it then overtakes it half the time, by
    symmetry of independent, equally loaded queues.

    >>> overtaking_share(1), overtaking_share(2), overtaking_share(32)
    (0.0, 0.25, 0.484375)
    """
    if paths <= 1:
        return 0.0
    return (1.0 - 1.0 / paths) / 2.0


def overtaking_share_of_delays(one_way_ns: Sequence[float], gap_ns: float) -> float:
    """Share of a sprayed flow's packets that overtake the one sent just ahead of them, on an
    unloaded fabric whose equal-cost paths differ only in their fixed one-way delays.

    Each packet takes one of the ``U`` paths independently and uniformly; it leaves ``gap_ns``
    after its predecessor (the frame's serialization at the sender's line rate). A packet on
    path ``b`` behind one on path ``a`` arrives first when ``delay_a - delay_b > gap``: the
    share is the fraction of the ``U^2`` ordered pairs for which that holds (a packet on the same
    path cannot pass a FIFO). Paths of equal delay reorder nothing (``q = 0``); a path longer
    than the others by more than a packet time is overtaken by every packet that follows one
    of its packets on a shorter path. Queueing delays are not in it: where several sources
    share a fabric link, :func:`overtaking_share` (the loaded limit) applies.

    >>> overtaking_share_of_delays([2000.0, 2000.0], 334.0)     # symmetric: nothing overtakes
    0.0
    >>> overtaking_share_of_delays([3000.0, 2000.0], 334.0)     # slow then fast: 1 pair of 4
    0.25
    >>> overtaking_share_of_delays([2200.0, 2000.0], 334.0)     # skew under a packet time
    0.0
    """
    delays = [float(d) for d in one_way_ns]
    paths = len(delays)
    if paths <= 1:
        return 0.0
    passing = sum(1 for a in delays for b in delays if a - b > gap_ns)
    return passing / paths**2


def in_order_goodput_share(paths: int, packets_in_flight: float) -> float:
    """Goodput share of a per-packet-routed flow whose receiver accepts packets only in order.

    An RC receiver without out-of-order placement takes an overtaking packet as a loss: it NAKs
    the gap and the sender goes back N, resending the ``packets_in_flight`` behind it (IBTA
    Vol. 1, 9.7.5 go-back-N retry; RoCE NICs follow it). Each useful packet then costs
    ``1 + q * W`` packets on the wire, with ``q`` the :func:`overtaking_share` and ``W`` the
    packets in flight (the bandwidth-delay product). A receiver that places packets out of
    order (a SuperNIC, ConnectX OOO placement, UET RUD) or a fabric that reassembles before the
    NIC pays nothing.

    Parameters
    ----------
    paths
        Equal-cost paths the packets are spread over.
    packets_in_flight
        Packets the sender has outstanding, ``rate x RTT / packet``.

    Returns
    -------
    float
        ``1 / (1 + q * W)``.

    Examples
    --------
    >>> in_order_goodput_share(1, 100.0)     # one path: nothing overtakes
    1.0
    >>> round(in_order_goodput_share(2, 4.0), 3)   # q = 1/4, W = 4: every useful packet costs 2
    0.5
    """
    return 1.0 / (1.0 + overtaking_share(paths) * max(0.0, packets_in_flight))
