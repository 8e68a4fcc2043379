"""Priority flow control (IEEE 802.1Qbb) on a shared-buffer switch, and the PFC watchdog.

The readable model
------------------
A switch counts, per ingress port and lossless priority, the bytes that came in through that
port and are still inside it. Those bytes live in the *shared pool* until the port's share
passes the pause threshold; after that, in the port's *headroom*, a reservation for what is
still on the wire when the pause takes effect.

- Pause threshold: dynamic, ``alpha x (shared pool - shared bytes in use)`` (the
  Choudhury-Hahne dynamic threshold as SONiC's ``dynamic_th`` and the HPCC simulator's
  ``pfc_a_shift`` apply it), or a static number of bytes.
- XOFF: when the port's shared bytes reach the threshold (or anything is in its headroom), the
  switch sends a PAUSE frame for that priority to the port's peer: it leaves after the frame
  the reverse link is sending, takes ``PAUSE_FRAME_BYTES`` on the wire and the link's delay.
  It carries ``quanta`` x 512 bit times (802.1Qbb); the peer stops sending that priority
  (after the frame it is sending) until then. While congested, the switch repeats the XOFF
  every half pause time, so the pause never lapses.
- XON: when the port's headroom is empty and its shared bytes fall ``resume_offset`` below the
  threshold, a PAUSE with zero quanta releases the peer.
- A packet arriving when the port's headroom is full is dropped: the lossless class lost a
  packet because the headroom was too small (a misconfiguration the model shows, not hides).
- Headroom needed (the default): ``2 x delay x rate + 2 x MTU frame + response``: the bytes on
  the cable both ways, the frame the peer is sending when the pause arrives and the one the
  switch is receiving when it decides, and the peer's response time (per-speed pause quanta
  as SONiC's ``buffer_headroom_mellanox.lua`` encodes them, docs/refs.md C.3).

A NIC that stops draining its receive buffer (a fault input) fills it and pauses its switch
port; the XOFF is repeated forever: a PFC storm. The *watchdog* on a switch polls its lossless
queues: one paused without sending for ``detect`` is put in storm mode for ``restore``: its
packets are dropped and pauses towards it ignored (SONiC ``pfcwd`` action ``drop``, catalog
C.4).

References: IEEE 802.1Qbb-2011 (pause quanta of 512 bit times); Zhu et al., SIGCOMM 2015;
Guo et al., "RDMA over Commodity Ethernet at Scale", SIGCOMM 2016 (storms, watchdog);
Choudhury and Hahne, "Dynamic Queue Length Thresholds for Shared-Memory Packet Switches",
IEEE/ACM ToN 1998.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.event import EV_KICK, EV_PAUSE, EV_PFC_REFRESH, now_ps, schedule
from fabricplan.sim.packet.queue import wire_ps
from fabricplan.sim.packet.state import (
    C_PAUSES,
    L_BUSY,
    L_BUSY_UNTIL,
    L_DELAY_PS,
    L_HEADROOM,
    L_PAUSE_FRAMES,
    L_REV,
    LF_PS_PER_BYTE,
    P_HDRM,
    P_SIZE,
    PF_PFC_ALPHA,
    PI_NIC_XOFF,
    PI_PAUSE_FRAME,
    PI_PFC_QUANTA,
    PI_PFC_RESUME,
    PI_PFC_STATIC_XOFF,
    Q_ING_BYTES,
    Q_ING_HDRM,
    Q_PAUSED_UNTIL,
    Q_STORM_UNTIL,
    Q_XOFF,
    S_SHARED,
    S_SHARED_USED,
    ZERO,
    SimState,
    int64,
)
from fabricplan.units import BITS_PER_BYTE

XOFF, XON = int64(1), int64(0)

PAUSE_QUANTUM_BITS = 512
"""One pause quantum is 512 bit times (IEEE 802.1Qbb; Nokia SR Linux PFC docs, docs/refs.md C.3)."""
PFC_MAX_QUANTA = 0xFFFF
"""XOFF frames carry the largest pause time and are refreshed while congested, as switches do."""
PAUSE_FRAME_BYTES = 84
"""A PFC frame on the wire: minimum Ethernet frame 64 B plus preamble/SFD 8 B and inter-frame
gap 12 B (IEEE 802.3)."""
PFC_DYNAMIC_ALPHA = 0.125
"""Default share of the free shared pool one ingress priority may take before XOFF: 1/8, the
HPCC simulator's ``pfc_a_shift`` 3 at NIC rate (alibaba-edu/High-Precision-Congestion-Control
simulation/scratch/third.cc @2f65c35c210d)."""
PFC_RESUME_OFFSET_BYTES = 3 * 1024
"""XON when the shared bytes are this far below the threshold (the HPCC simulator's
``resume_offset``, switch-mmu.cc @2f65c35c210d)."""
NIC_XOFF_BYTES = 64 * 1024
"""Receive buffer a stuck NIC fills before it pauses its switch port (estimate; ConnectX sizes
its lossless receive buffer from the mlx5 ``xoff`` formula of docs/refs.md C.3)."""
RESPONSE_QUANTA_BY_GBPS: dict[float, int] = {
    10.0: 67,
    25.0: 80,
    40.0: 118,
    50.0: 147,
    100.0: 394,
    200.0: 453,
    400.0: 905,
    800.0: 905,
}
"""Peer response time in pause quanta per port speed (IEEE 802.3 Annex 31B.3.7 as encoded in
sonic-swss cfgmgr/buffer_headroom_mellanox.lua @18913fa35726; docs/refs.md C.3)."""
WATCHDOG_DETECT_US = 200.0
WATCHDOG_RESTORE_US = 200.0
WATCHDOG_POLL_US = 200.0
"""SONiC ``pfcwd start_default`` values are 200 ms each (docs/refs.md C.4). The packet simulator
runs for milliseconds, so its defaults are the same numbers in microseconds; give the real
ones to study a storm that long."""


@dataclass(frozen=True)
class PfcSpec:
    """PFC settings of every switch (and of a stuck NIC)."""

    alpha: float = PFC_DYNAMIC_ALPHA
    static_xoff_bytes: int = 0
    """Pause threshold in bytes per ingress priority; 0 uses the dynamic threshold."""
    headroom_bytes: int | None = None
    """Headroom per ingress port and lossless priority; ``None`` sizes it for each link."""
    resume_offset_bytes: int = PFC_RESUME_OFFSET_BYTES
    quanta: int = PFC_MAX_QUANTA
    nic_xoff_bytes: int = NIC_XOFF_BYTES
    watchdog: bool = False
    watchdog_detect_us: float = WATCHDOG_DETECT_US
    watchdog_restore_us: float = WATCHDOG_RESTORE_US
    watchdog_poll_us: float = WATCHDOG_POLL_US


def response_quanta(speed_gbps: float) -> int:
    """Peer response time of a port in pause quanta (the next listed speed up).

    >>> response_quanta(100.0), response_quanta(400.0)
    (394, 905)
    """
    for speed in sorted(RESPONSE_QUANTA_BY_GBPS):
        if speed_gbps <= speed:
            return RESPONSE_QUANTA_BY_GBPS[speed]
    return RESPONSE_QUANTA_BY_GBPS[max(RESPONSE_QUANTA_BY_GBPS)]


def headroom_bytes(speed_gbps: float, delay_ns: float, frame_bytes: int) -> int:
    """Headroom a lossless ingress priority needs so that nothing is lost after its XOFF.

    ``2 x delay x rate`` (the cable both ways) + ``2 x frame`` (one leaving the peer when the
    pause lands, one arriving as the switch decides) + the peer's response time + one PAUSE
    frame.

    >>> headroom_bytes(100.0, 1000.0, 4178)   # 100 Gb/s, 1 us: 25 kB + 8.4 kB + 25 kB
    58656
    """
    rate_bytes_per_ns = speed_gbps / BITS_PER_BYTE
    cable = 2.0 * delay_ns * rate_bytes_per_ns
    response = response_quanta(speed_gbps) * PAUSE_QUANTUM_BITS / BITS_PER_BYTE
    return int(cable + 2 * frame_bytes + response + PAUSE_FRAME_BYTES + 0.5)


@jit
def pause_threshold(s: SimState, sw: int) -> int:
    """Bytes of the shared pool one ingress priority may hold before XOFF."""
    static = s.prm_i[PI_PFC_STATIC_XOFF]
    if static > 0:
        return int(static)
    free = s.si[sw, S_SHARED] - s.si[sw, S_SHARED_USED]
    if free < 0:
        free = 0
    return int(s.prm_f[PF_PFC_ALPHA] * free)


@jit
def pfc_admit(s: SimState, sw: int, in_link: int, cls: int, p: int) -> bool:
    """Account an arriving lossless packet; False if its headroom is full (the packet is lost)."""
    lc = s.lc
    size = s.pi[p, P_SIZE]
    thr = pause_threshold(s, sw)
    shared_ok = lc[in_link, cls, Q_ING_HDRM] == 0 and lc[in_link, cls, Q_ING_BYTES] + size <= thr
    if shared_ok and s.si[sw, S_SHARED_USED] + size <= s.si[sw, S_SHARED]:
        lc[in_link, cls, Q_ING_BYTES] += size
        s.si[sw, S_SHARED_USED] += size
        s.pi[p, P_HDRM] = 0
        return True
    if lc[in_link, cls, Q_ING_HDRM] + size > s.li[in_link, L_HEADROOM]:
        return False
    lc[in_link, cls, Q_ING_HDRM] += size
    s.pi[p, P_HDRM] = size
    return True


@jit
def pfc_after_admit(s: SimState, sw: int, in_link: int, cls: int) -> None:
    """XOFF the ingress priority once it passes its threshold or spills into headroom."""
    lc = s.lc
    if lc[in_link, cls, Q_XOFF] != 0:
        return
    if lc[in_link, cls, Q_ING_HDRM] > 0 or lc[in_link, cls, Q_ING_BYTES] >= pause_threshold(s, sw):
        lc[in_link, cls, Q_XOFF] = 1
        send_pause(s, in_link, cls, XOFF)


@jit
def pfc_release(s: SimState, sw: int, in_link: int, cls: int, p: int) -> None:
    """A lossless packet leaves the switch: free its buffer; XON when the port has drained."""
    lc = s.lc
    size = s.pi[p, P_SIZE]
    from_hdrm = s.pi[p, P_HDRM]
    lc[in_link, cls, Q_ING_HDRM] -= from_hdrm
    lc[in_link, cls, Q_ING_BYTES] -= size - from_hdrm
    s.si[sw, S_SHARED_USED] -= size - from_hdrm
    if lc[in_link, cls, Q_XOFF] != 0 and lc[in_link, cls, Q_ING_HDRM] == 0:
        shared = lc[in_link, cls, Q_ING_BYTES]
        if shared == 0 or shared + s.prm_i[PI_PFC_RESUME] <= pause_threshold(s, sw):
            lc[in_link, cls, Q_XOFF] = 0
            send_pause(s, in_link, cls, XON)


@jit
def send_pause(s: SimState, in_link: int, cls: int, xoff: int) -> None:
    """Send a PAUSE (``xoff`` = XOFF) or resume (XON) frame to the sender of ``in_link``."""
    now = now_ps(s)
    rev = s.li[in_link, L_REV]
    wait = 0
    if s.li[rev, L_BUSY] != 0 and s.li[rev, L_BUSY_UNTIL] > now:
        wait = s.li[rev, L_BUSY_UNTIL] - now
    arrive = now + wait + wire_ps(s, rev, s.prm_i[PI_PAUSE_FRAME]) + s.li[rev, L_DELAY_PS]
    duration = 0
    if xoff != 0:
        duration = int(
            s.prm_i[PI_PFC_QUANTA]
            * PAUSE_QUANTUM_BITS
            * s.lf[in_link, LF_PS_PER_BYTE]
            / BITS_PER_BYTE
        )
        s.cnt[C_PAUSES] += 1
        schedule(s, now + duration // 2, EV_PFC_REFRESH, in_link, cls, ZERO)
    schedule(s, arrive, EV_PAUSE, in_link, cls, duration)


@jit
def on_pause(s: SimState, link: int, cls: int, duration_ps: int) -> bool:
    """A PAUSE frame reaches ``link``'s sender; True if the sender may look at its queues."""
    now = now_ps(s)
    if duration_ps == 0:
        s.lc[link, cls, Q_PAUSED_UNTIL] = now
        return True
    s.li[link, L_PAUSE_FRAMES] += 1
    until = now + duration_ps
    s.lc[link, cls, Q_PAUSED_UNTIL] = until
    schedule(s, until, EV_KICK, link, ZERO, ZERO)
    return False


@jit
def on_refresh(s: SimState, in_link: int, cls: int) -> None:
    if s.lc[in_link, cls, Q_XOFF] != 0:
        send_pause(s, in_link, cls, XOFF)


@jit
def paused(s: SimState, link: int, cls: int, now: int) -> bool:
    """The sender of ``link`` may not send ``cls`` now (a watchdog in storm mode ignores it)."""
    if s.lc[link, cls, Q_PAUSED_UNTIL] <= now:
        return False
    return bool(s.lc[link, cls, Q_STORM_UNTIL] <= now)


@jit
def nic_hold(s: SimState, in_link: int, cls: int, size: int) -> None:
    """A NIC that has stopped draining keeps a packet; past its threshold it pauses its port."""
    lc = s.lc
    lc[in_link, cls, Q_ING_BYTES] += size
    if lc[in_link, cls, Q_XOFF] == 0 and lc[in_link, cls, Q_ING_BYTES] >= s.prm_i[PI_NIC_XOFF]:
        lc[in_link, cls, Q_XOFF] = 1
        send_pause(s, in_link, cls, XOFF)
