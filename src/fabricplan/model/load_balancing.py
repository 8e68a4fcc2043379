"""How real switches split a loaded trunk: the adaptive-routing implementations and their limits.

Every level reads these records (the analytic level through the profile, the simulators through
:mod:`fabricplan.sim.mechanism`), so they live below both. An implementation is one of two kinds:

- ``per_packet``: every packet goes to the output the switch sees least loaded (InfiniBand AR,
  Spectrum-4 RoCE AR). Packets of one flow take different paths and arrive out of order, so the
  receiver must place them out of order (ConnectX OOO data placement on InfiniBand, the Spectrum-X
  SuperNIC on Ethernet); an in-order receiver (RoCE go-back-N) takes every overtaking packet as a
  loss.
- ``flowlet``: a flow is re-hashed only after an idle gap longer than ``flowlet_gap_ns``, chosen
  above the paths' delay skew so that a re-hashed flow cannot overtake itself (Kandula et al.,
  "Dynamic load balancing without packet reordering", SIGCOMM CCR 37(2), 2007 (FLARE); Alizadeh
  et al., "CONGA", SIGCOMM 2014). The order is kept; but a long-lived NCCL flow that never idles
  for that long is one flowlet, placed once, and collides like an ECMP flow.

``efficiency`` is the share of the ideal an implementation delivered in its measurement, and
``oblivious_efficiency`` what oblivious (static or hashed) routing delivered in the same
measurement. An adaptive switch can only win back what oblivious placement loses, so the
figure the levels use is the share of that loss it recovers,
``recovered_share = (efficiency - oblivious) / (1 - oblivious)``: a trunk that hashing already
balances (all-to-all with a million flows) loses nothing to adaptive routing, a trunk that
hashing leaves with one link carrying ``x`` times the mean keeps
``1/x + recovered_share (1 - 1/x)`` of its capacity. ``load_signal_delay_ns`` is how old the
load information a decision uses is.

>>> round(SWITCH_LOCAL_ADAPTIVE_ROUTING.recovered_share, 3)   # (0.77 - 0.38) / (1 - 0.38)
0.629
>>> round(SPECTRUM_X_ADAPTIVE_ROUTING.recovered_share, 3)     # (0.95 - 0.60) / (1 - 0.60)
0.875

>>> adaptive_routing_for_asic("Spectrum-4").granularity
'per_packet'
>>> adaptive_routing_for_asic("Tomahawk 5").flowlet_gap_ns
256000.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

AdaptiveGranularity = Literal["per_packet", "flowlet"]


@dataclass(frozen=True)
class AdaptiveRouting:
    """How close one implementation of adaptive routing comes to an ideal split of a loaded
    trunk over its equal-cost links, and what limits it."""

    implementation: str
    efficiency: float
    """Share of the ideal (every byte on the least-loaded path) the implementation delivered
    in its source's measurement."""
    oblivious_efficiency: float
    """Share of the ideal oblivious routing (static tables or a per-flow hash) delivered in the
    same measurement: the loss adaptive routing had to win back."""
    basis: Literal["measured", "vendor", "estimate"]
    source: str
    granularity: AdaptiveGranularity = "per_packet"
    """What the switch places: each packet, or a flowlet (a burst after an idle gap)."""
    flowlet_gap_ns: float | None = None
    """Idle gap after which a flowlet implementation may move a flow to another path, ns."""
    load_signal_delay_ns: float = 0.0
    """Age of the load information a decision uses, ns: 0 for a switch reading its own output
    queues; a round trip for schemes fed back from remote switches (CONGA)."""

    @property
    def recovered_share(self) -> float:
        """Share of oblivious routing's imbalance the implementation wins back (0..1).

        >>> round(INFINIBAND_ADAPTIVE_ROUTING.recovered_share, 3)   # the switch-local figures
        0.629
        """
        if self.oblivious_efficiency >= 1.0:
            return 1.0
        gained = (self.efficiency - self.oblivious_efficiency) / (1.0 - self.oblivious_efficiency)
        return min(1.0, max(0.0, gained))


SWITCH_LOCAL_ADAPTIVE_ROUTING = AdaptiveRouting(
    implementation="switch-local per-packet adaptive routing",
    efficiency=0.77,
    oblivious_efficiency=0.38,
    basis="measured",
    source="Geoffray and Hoefler, 'Adaptive Routing Strategies for Modern High Performance"
    " Networks', IEEE Hot Interconnects 2008: the best switch-local adaptive scheme reached 77 %"
    " effective bisection bandwidth on a non-blocking 512-node Clos (38 % statically routed;"
    " 100 % for smaller node counts), random pairs exchanging 1 MB",
)
"""A switch choosing the least-loaded output from its own queues only: the way down from the
chosen upper switch is fixed, so packets still meet on the downlinks. Used for every
implementation without a figure of its own."""
SPECTRUM_X_ADAPTIVE_ROUTING = AdaptiveRouting(
    implementation="Spectrum-X (Spectrum-4 per-packet adaptive routing, SuperNIC reordering)",
    efficiency=0.95,
    oblivious_efficiency=0.60,
    basis="vendor",
    source="NVIDIA newsroom, 'NVIDIA Ethernet Networking Accelerates World's Largest AI"
    " Supercomputer, Built by xAI', 2024-10-28: 95 % data throughput with Spectrum-X against"
    " 60 % for standard Ethernet at that scale",
)
"""Per packet from the switch's own queue occupancy and port utilisation (Cumulus NetQ,
'Adaptive Routing': "selecting forwarding paths dynamically based on the state of the switch,
such as queue occupancy and port utilization"), so the load signal is local (0 ns)."""
INFINIBAND_ADAPTIVE_ROUTING = AdaptiveRouting(
    implementation="InfiniBand adaptive routing (NVIDIA SM ar_updn, per-switch AR groups)",
    efficiency=SWITCH_LOCAL_ADAPTIVE_ROUTING.efficiency,
    oblivious_efficiency=SWITCH_LOCAL_ADAPTIVE_ROUTING.oblivious_efficiency,
    basis="estimate",
    source="NVIDIA publishes no effective-bandwidth figure for Quantum AR; the switch decides"
    " from its own port load (AR groups programmed by the subnet manager), so the switch-local"
    " measurement of Geoffray and Hoefler (HOTI 2008) stands for it",
)
"""Per packet within the AR group the subnet manager programs; the HCA places the out-of-order
packets (MLNX_OFED, 'Out-of-Order (OOO) Data Placement': ConnectX-5 and later, RC/XRC/DC)."""
BROADCOM_DLB_FLOWLET = AdaptiveRouting(
    implementation="Broadcom dynamic load balancing (DLB) in flowlet mode",
    efficiency=SWITCH_LOCAL_ADAPTIVE_ROUTING.efficiency,
    oblivious_efficiency=SWITCH_LOCAL_ADAPTIVE_ROUTING.oblivious_efficiency,
    basis="estimate",
    source="Juniper Apstra 6.0 user guide, 'Configure Global Load Balancing' (DLB on Broadcom"
    " Tomahawk: flowlet or per-packet mode; flowlet inactivity interval default 256"
    " microseconds); Juniper Junos 'Configure Flowset Table Size in DLB Flowlet Mode' (a flow"
    " stays on its link until the inactivity timer expires); the split between flowlets is"
    " switch-local, so Geoffray and Hoefler's 77 % stands for it",
    granularity="flowlet",
    flowlet_gap_ns=256_000.0,
)
"""Flowlet mode keeps RoCE in order; an NCCL flow that streams for longer than the inactivity
interval without a gap is placed once, like an ECMP flow."""

ADAPTIVE_ROUTING_BY_ASIC: Mapping[str, AdaptiveRouting] = MappingProxyType(
    {
        "Quantum": INFINIBAND_ADAPTIVE_ROUTING,
        "Quantum-2": INFINIBAND_ADAPTIVE_ROUTING,
        "Quantum-X800": INFINIBAND_ADAPTIVE_ROUTING,
        "Spectrum-4": SPECTRUM_X_ADAPTIVE_ROUTING,
        "Tomahawk 4": BROADCOM_DLB_FLOWLET,
        "Tomahawk 5": BROADCOM_DLB_FLOWLET,
    }
)
"""The implementation of each catalog switch ASIC that has one of its own (the ``asic`` field
of the catalog's switch entries); any other adaptive switch (a generic switch) is
:data:`SWITCH_LOCAL_ADAPTIVE_ROUTING`."""


def adaptive_routing_for_asic(asic: str) -> AdaptiveRouting:
    """The adaptive-routing implementation of a switch ASIC (by the catalog's ``asic`` name).

    >>> adaptive_routing_for_asic("").implementation
    'switch-local per-packet adaptive routing'
    """
    return ADAPTIVE_ROUTING_BY_ASIC.get(asic, SWITCH_LOCAL_ADAPTIVE_ROUTING)
