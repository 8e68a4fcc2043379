"""Flowlet switching: a flow keeps its path while it sends back to back, and may take another
after an idle gap longer than the flowlet timer.

The readable model (Kandula, Katabi, Sinha, Berger, "Dynamic load balancing without packet
reordering", ACM SIGCOMM CCR 37(2), 2007 (FLARE): a burst separated from the previous one by
more than the paths' delay difference can take another path without reordering; Alizadeh et
al., "CONGA: Distributed Congestion-Aware Load Balancing for Datacenters", SIGCOMM 2014: the
leaf keeps a flowlet table and starts a new flowlet after an inactivity timeout; Vanini et al.,
"Let It Flow: Resilient Asymmetric Load Balancing with Flowlet Switching", NSDI 2017
(LetFlow): each new flowlet takes a path at random):

- The flow's ingress leaf (the first switch its data meets) times the gap between its
  packets. A packet that arrives more than ``flowlet_gap_us`` after the flow's previous one
  starts a new flowlet (``F_FLOWLET`` + 1).
- Every switch with several equal-cost next hops picks one by a hash of (flow, flowlet,
  switch, run salt): one path per flowlet, a fresh random draw for the next (LetFlow's choice;
  CONGA's congestion-aware choice is not modelled). A flow that never pauses longer than the
  timer is one flowlet and stays on one path, as under ECMP.
- ACKs of a flow take one hashed path (their own flowlet 0).

A new flowlet on a shorter path can overtake the old one's last packets when the gap is
shorter than the paths' delay difference; the receiver deals with that as it deals with any
reordering.
"""

from __future__ import annotations

import numpy as np

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.splitmix import SPLITMIX_GAMMA, SPLITMIX_MIX1, SPLITMIX_MIX2
from fabricplan.sim.packet.state import (
    C_FLOWLETS,
    F_FLOWLET,
    F_FLOWLET_LAST_PS,
    L_SRC,
    P_FLOW,
    P_KIND,
    PI_FLOWLET_GAP,
    PI_HOSTS,
    PI_ROUTE_SALT,
    PKT_DATA,
    SimState,
)

FLOWLET_GAP_US = 500.0
"""Default flowlet inactivity timeout, µs, used when the switch's ASIC names no timer of its
own (:mod:`fabricplan.model.load_balancing` gives Tomahawk DLB's 256 µs). The figure is
CONGA's: the flowlet inactivity timeout ``T_fl`` of its testbed evaluation, 500 µs (13 ms for
its per-flow variant CONGA-Flow; Alizadeh et al., "CONGA: Distributed Congestion-Aware Load
Balancing for Datacenters", SIGCOMM 2014, pp. 503-514, evaluation section). The paper itself
was not retrieved here: the value and its use are as a public replication report restates
them (Grenillo, "Replicating CONGA", 2025: "The paper uses T_fl = 500 µs for CONGA and 13 ms
for CONGA-Flow"), so the section is not cited; treat it as a secondary citation."""


@jit
def flowlet_observe(s: SimState, p: int, in_link: int, now: int) -> None:
    """Packet ``p`` reached a switch over ``in_link``: at the flow's ingress leaf, a data
    packet after a gap longer than the timer starts a new flowlet."""
    if s.pi[p, P_KIND] != PKT_DATA or s.li[in_link, L_SRC] >= s.prm_i[PI_HOSTS]:
        return
    f = s.pi[p, P_FLOW]
    last = s.fi[f, F_FLOWLET_LAST_PS]
    if last < 0 or now - last > s.prm_i[PI_FLOWLET_GAP]:
        if last >= 0:
            s.fi[f, F_FLOWLET] += 1
        s.cnt[C_FLOWLETS] += 1
    s.fi[f, F_FLOWLET_LAST_PS] = now


@jit
def flowlet_choice(s: SimState, sw: int, p: int, n: int) -> int:
    """Which of switch ``sw``'s ``n`` next hops packet ``p``'s flowlet takes (0 .. n-1)."""
    f = s.pi[p, P_FLOW]
    draw = s.fi[f, F_FLOWLET] + 1 if s.pi[p, P_KIND] == PKT_DATA else 0
    x = np.uint64(s.prm_i[PI_ROUTE_SALT]) ^ (np.uint64(f + 1) * SPLITMIX_GAMMA)
    x = x ^ (np.uint64(draw) * SPLITMIX_MIX1) ^ (np.uint64(sw + 1) * SPLITMIX_MIX2)
    x = (x ^ (x >> np.uint64(30))) * SPLITMIX_MIX1
    x = (x ^ (x >> np.uint64(27))) * SPLITMIX_MIX2
    x = x ^ (x >> np.uint64(31))
    return int(x % np.uint64(n))
