"""The packet-level simulator: InfiniBand, RoCE, Spectrum-X, scheduled (VOQ) and Ultra Ethernet
mechanisms, packet by packet.

Build a :class:`~fabricplan.sim.packet.network.PacketNetwork` (from a designed fabric's
:class:`~fabricplan.topology.graph.FabricGraph`, or a small named one), the shared floor's
:class:`~fabricplan.sim.traffic.Traffic` and a :class:`~fabricplan.sim.packet.spec.
PacketSpec`, then :func:`~fabricplan.sim.packet.simulation.simulate_packet`; see
docs/models.md, "Packet-level simulator".
"""

from __future__ import annotations
