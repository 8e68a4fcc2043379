"""InfiniBand credit-based link-level flow control, per virtual lane.

The readable model
------------------
The receiving end of every link advertises, per virtual lane (VL), how much buffer it has for
that link (its *credits*, counted in 64-byte blocks). The sender transmits a packet on a VL only
when the credits cover it, and spends them; the receiver returns them when the packet leaves its
buffer (forwarded by a switch, consumed by an HCA), and they reach the sender one link delay
later. Nothing is ever dropped for lack of buffer: a full buffer stalls the sender instead, and
a stalled switch port fills its own input buffers and stalls *its* senders in turn — the same
spreading as PFC, one packet at a time rather than one pause frame at a time.

The default buffer per VL and link is twice the credit round trip (``2 x (2 x delay x rate +
2 x MTU frame)``), so one flow alone is never credit-limited; NVIDIA does not publish Quantum's
per-port buffer, so this is a model choice, not a figure. Searched for one (2026-12): the
QM9700/QM9790 user manual, Quantum-2 product pages and NVIDIA's networking docs give ports,
speeds, latency classes and power but no buffer; Mellanox's own OMNeT++ InfiniBand flit-level
model (ib_flit_sim, 2013) says its parameter defaults do not indicate the capabilities of
Mellanox products; the one per-port figure found is a ConnectX adapter's receive buffer in
Ethernet mode, 262,016 B for the whole port (Mellanox community, "HowTo Tune Receive Buffers
on Mellanox Adapter Cards", MLNX_OFED 4.2+, adapter generation not stated), which bounds a
NIC's side of a link but not a switch VL. The default is therefore uncertain by more than a
factor of two either way: at 400 Gb/s it is 21.5 kB over a 5 m cable (25 ns) and 216 kB over
a 1 µs link, against 256 kB a ConnectX port holds for all its priorities.

The same mechanism is Ultra Ethernet's optional credit-based flow control (CBFC, UE
Specification 1.0, 2025-06-11, §5.2): per virtual channel (VC) credits per hop, a frame sent
only when the receiver has room for ``ceil((size + overhead) / credit size)`` credits, freed
credits returned as the frame drains. Only the credit size differs (:data:`CBFC_CREDIT_BYTES`);
CBFC returns credits in ``CF_Update`` control ordered sets at least every few kB of reverse
traffic rather than per packet (a batching not modelled: credits come back per packet).

References: IBTA InfiniBand Architecture Specification Vol. 1, §7.9 (flow control; credits in
64-byte blocks per data VL; VL15 exempt); opencomputeproject/SAI doc/CBFC/SAI-Credit_Based_
Flow_Control.md @9ca8312f (the UEC Management WG's SAI proposal, 2026-01-20, summarising UE 1.0
§5.2: credit check, CF_Update, up to 32 VCs).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_CREDIT, now_ps, schedule
from fabricplan.sim.packet.state import L_DELAY_PS, L_REV, PI_CREDIT_BLOCK, Q_CREDITS, SimState
from fabricplan.units import BITS_PER_BYTE

CREDIT_BLOCK_BYTES = 64
"""One flow-control credit is a 64-byte block (IBTA Vol. 1, §7.9.4)."""
CBFC_CREDIT_BYTES = 128
"""UEC CBFC credit size, bytes: the SAI proposal's default ``CBFC_SENDER_CREDIT_SIZE`` (128 B;
negotiated per link, at most the receiver's native credit size; opencomputeproject/SAI
doc/CBFC/SAI-Credit_Based_Flow_Control.md @9ca8312f)."""
CREDIT_ROUND_TRIPS = 2.0
"""Default buffer per VL as a multiple of the credit round trip (model choice, see above)."""


@dataclass(frozen=True)
class CreditSpec:
    """Credit flow-control settings."""

    vl_buffer_bytes: int | None = None
    """Receive buffer per virtual lane and link; ``None`` sizes it for each link."""
    block_bytes: int = CREDIT_BLOCK_BYTES


def vl_buffer_bytes(speed_gbps: float, delay_ns: float, frame_bytes: int) -> int:
    """Default receive buffer per VL of a link: ``CREDIT_ROUND_TRIPS`` credit round trips.

    >>> vl_buffer_bytes(100.0, 1000.0, 4122)   # 2 x (25 kB + 8.2 kB), rounded to 64 B blocks
    66496
    """
    round_trip = 2.0 * delay_ns * speed_gbps / BITS_PER_BYTE + 2 * frame_bytes
    size = int(CREDIT_ROUND_TRIPS * round_trip)
    return -(-size // CREDIT_BLOCK_BYTES) * CREDIT_BLOCK_BYTES


@jit
def credit_bytes(s: SimState, size: int) -> int:
    """Credits a packet of ``size`` bytes spends (whole blocks)."""
    block = s.prm_i[PI_CREDIT_BLOCK]
    return int(((size + block - 1) // block) * block)


@jit
def has_credit(s: SimState, link: int, cls: int, size: int) -> bool:
    return bool(s.lc[link, cls, Q_CREDITS] >= credit_bytes(s, size))


@jit
def spend_credit(s: SimState, link: int, cls: int, size: int) -> None:
    s.lc[link, cls, Q_CREDITS] -= credit_bytes(s, size)


@jit
def return_credit(s: SimState, in_link: int, cls: int, size: int) -> None:
    """The packet left the receiver's buffer: its credits travel back to the sender."""
    rev = s.li[in_link, L_REV]
    at = now_ps(s) + s.li[rev, L_DELAY_PS]
    schedule(s, at, EV_CREDIT, in_link, cls, credit_bytes(s, size))


@jit
def on_credit(s: SimState, link: int, cls: int, amount: int) -> None:
    s.lc[link, cls, Q_CREDITS] += amount
