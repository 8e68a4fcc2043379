"""A scheduled fabric (DDC / VOQ): virtual output queues, request and grant, cells.

The readable model, kept simple enough to be checked by hand (Broadcom, "Jericho3-AI" press
release 2023-04-11: VOQs with end-to-end scheduling, cells sprayed over Ramon fabric elements;
OCP Distributed Disaggregated Chassis specification, 2019):

- **VOQ at the ingress leaf.** A data packet that enters the fabric from a host joins the
  virtual output queue of its egress port (the link down to its destination host) in the leaf's
  buffer; it is admitted against the shared pool only (it waits there, not in any output
  queue, so no other port's traffic waits behind it).
- **Request and grant.** The leaf asks the egress port's scheduler for credit; the request
  takes the fabric's one-way latency from this leaf to the egress leaf (the link delays of the
  flow's path between the two leaves; request and grant messages are small, their
  serialisation is not counted). The scheduler grants at its port's drain rate: each grant is
  the packet's wire time on the egress port after the previous one, and never before the
  request arrived. Grants are given in the order requests arrive, whichever leaf asks (a
  first-come scheduler: as fair as the requests are interleaved). The grant takes the same
  latency back; then the packet leaves the VOQ into the fabric. One fabric round trip is the
  price of scheduling; no fabric or egress queue can be offered more than its port drains, so
  the fabric needs no PFC.
- **Cells.** On fabric links (switch to switch) a packet travels as ``ceil(size /
  cell_bytes)`` cells, each with ``cell_header_bytes`` more on the wire; cells of one packet
  follow one another on the link the packet was sprayed to (the sprayer turns per packet, not
  per cell: a simplification that keeps the per-link load even on a symmetric fabric). Host
  links carry plain packets.
- **Reassembly at the egress leaf** (:func:`reassemble`). Sprayed over fabric links of unequal
  load or length, a flow's packets reach the egress leaf out of order; the leaf hands them to
  the host's port in sequence: the next expected packet goes on at once (with every held one
  that follows it), a packet that overtook it is held in the leaf's buffer until the gap is
  filled. The host's NIC sees its packets in order (an ``in_order`` receiver discards none);
  a packet resent by the host (a loss the scheduler could not prevent) passes through. The
  reassembly buffer has no bound of its own (Jericho3-AI's is deep, off-chip HBM).
- Control packets (ACKs) are not scheduled: they are small and take the control class.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.egress import release
from fabricplan.sim.packet.queue import enqueue, free_packet, wire_ps
from fabricplan.sim.packet.state import (
    C_REASSEMBLY_HELD,
    C_VOQ_PACKETS,
    C_VOQ_WAIT_PS,
    F_DST,
    F_EG_NEXT,
    F_PACKETS,
    F_RX_OFFSET,
    FH_PATH,
    H_DOWN,
    H_GRANT_PS,
    L_DELAY_PS,
    L_DST,
    L_SRC,
    P_CLS,
    P_FLOW,
    P_SEQ,
    P_SIZE,
    PI_CELL_BYTES,
    PI_CELL_HEADER,
    PI_HOSTS,
    SimState,
)


@jit
def fabric_latency_ps(s: SimState, f: int) -> int:
    """One-way link delay of flow ``f``'s path from its ingress leaf to its egress leaf."""
    hosts = s.prm_i[PI_HOSTS]
    total = 0
    for hop in range(1, s.fh.shape[2]):
        link = s.fh[f, FH_PATH, hop]
        if link < 0 or s.li[link, L_DST] < hosts:
            break
        total += s.li[link, L_DELAY_PS]
    return int(total)


@jit
def voq_release_ps(s: SimState, p: int, now: int) -> int:
    """Request credit for packet ``p`` (arrived now at its ingress leaf); returns when the
    grant is back and the packet may leave its VOQ."""
    f = s.pi[p, P_FLOW]
    dest = s.fi[f, F_DST]
    latency = fabric_latency_ps(s, f)
    grant = now + latency
    if s.hi[dest, H_GRANT_PS] > grant:
        grant = s.hi[dest, H_GRANT_PS]
    s.hi[dest, H_GRANT_PS] = grant + wire_ps(s, s.hi[dest, H_DOWN], s.pi[p, P_SIZE])
    release = grant + latency
    s.cnt[C_VOQ_PACKETS] += 1
    s.cnt[C_VOQ_WAIT_PS] += release - now
    return int(release)


@jit
def cell_wire_bytes(s: SimState, size: int) -> int:
    """Wire bytes of a ``size``-byte packet cut into cells on a fabric link."""
    cell = s.prm_i[PI_CELL_BYTES]
    if cell <= 0:
        return size
    return int(size + (size + cell - 1) // cell * s.prm_i[PI_CELL_HEADER])


@jit
def reassemble(s: SimState, p: int, out: int, cls: int) -> None:
    """Data packet ``p`` is bound for its host over the egress leaf's port ``out``: queue it
    if it is the flow's next one (and the held ones that follow), else hold it."""
    f = s.pi[p, P_FLOW]
    seq = s.pi[p, P_SEQ]
    expected = s.fi[f, F_EG_NEXT]
    base = s.fi[f, F_RX_OFFSET]
    if seq < expected:  # a resent packet the host has had: it sorts out the duplicate
        enqueue(s, out, cls, p)
        return
    if seq > expected:
        if s.eg_held[base + seq] >= 0:  # a second copy of one already held
            release(s, s.li[out, L_SRC] - s.prm_i[PI_HOSTS], p, cls)
            free_packet(s, p)
        else:
            s.eg_held[base + seq] = p
            s.cnt[C_REASSEMBLY_HELD] += 1
        return
    enqueue(s, out, cls, p)
    expected += 1
    n = s.fi[f, F_PACKETS]
    while expected < n and s.eg_held[base + expected] >= 0:
        held = s.eg_held[base + expected]
        s.eg_held[base + expected] = -1
        enqueue(s, out, s.pi[held, P_CLS], held)
        expected += 1
    s.fi[f, F_EG_NEXT] = expected


def reassembly_table(egress_reassembly: bool, packets: int) -> NDArray[np.int64]:
    """``eg_held`` of a run carrying ``packets`` data packets: no packet held (one unused
    slot when the fabric does not reassemble).

    >>> reassembly_table(True, 3).tolist(), reassembly_table(False, 3).size
    ([-1, -1, -1], 1)
    """
    return np.full(packets if egress_reassembly else 1, -1, dtype=np.int64)
