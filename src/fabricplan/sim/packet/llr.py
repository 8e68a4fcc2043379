"""Link-level retry (LLR): a link replays a corrupted frame itself, one link round trip after
it, so the loss never reaches the transport.

The readable model (Ultra Ethernet Consortium, UE Specification 1.0, 2025-06-11, link layer,
optional LLR; as summarised by the UEC Management WG's SAI proposal, opencomputeproject/SAI
doc/LLR/SAI-Link_Layer_Retry.md @b0c403e6, 2025-11-05: frames carry a sequence number in the
preamble, the sender keeps them in a replay buffer until a cumulative LLR_ACK, a frame with a
bad CRC or uncorrectable FEC error is answered by an LLR_NACK and replayed go-back-N, the
receiver discarding what follows until the expected frame arrives; a replay timer covers a
lost last frame or NACK):

- A data frame arrives corrupted with the link's frame error ratio (a fault of the run,
  :class:`~fabricplan.sim.packet.spec.FaultSpec`; control frames are short and exempt).
- Without LLR the receiving end drops it (bad FCS): the transport finds the loss by a gap or
  its retransmission timer.
- With LLR the receiving end sends an LLR_NACK when the frame's last bit is in; it reaches
  the sender after the reverse link's delay; the sender replays the frame from its replay
  buffer ahead of new frames (the control class's strict priority), and the replay crosses the
  link again: one link round trip plus one frame time, no end-to-end timeout.
- Order on the link is kept as go-back-N keeps it: frames that arrive while a replay is
  outstanding are held at the receiving end and handed on, in order, right after the replay.
  The go-back-N sender would also resend them (the frames in flight during one link round
  trip); here they are held instead of sent twice, so the replayed bytes are undercounted by
  that much (a few frames per error on a short link).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import return_credit
from fabricplan.sim.packet.event import EV_LLR_REPLAY, now_ps, schedule
from fabricplan.sim.packet.link import try_send
from fabricplan.sim.packet.queue import enqueue, free_packet
from fabricplan.sim.packet.splitmix import uniform01
from fabricplan.sim.packet.state import (
    C_CORRUPTED,
    C_DROPS,
    C_LLR_REPLAYS,
    CONTROL_CLASS,
    FC_CREDIT,
    FLAG_REPLAY,
    FLAG_TRIMMED,
    L_CORRUPTED,
    L_DELAY_PS,
    L_DROPS,
    L_LLR_HOLD_HEAD,
    L_LLR_HOLD_TAIL,
    L_LLR_OUTSTANDING,
    L_LLR_RELEASE,
    L_LLR_REPLAYS,
    L_REV,
    LF_FRAME_ERROR,
    P_CLS,
    P_FLAGS,
    P_KIND,
    P_NEXT,
    P_SIZE,
    P_TAIL_PS,
    PI_FC,
    PI_FRAME_ERRORS,
    PI_LLR,
    PKT_DATA,
    ZERO,
    SimState,
)


@jit
def _credits_back(s: SimState, p: int, link: int) -> None:
    """A discarded frame never took the receiver's buffer: its credits go back."""
    cls = s.pi[p, P_CLS]
    if s.prm_i[PI_FC] == FC_CREDIT and cls != CONTROL_CLASS and s.class_lossless[cls] != 0:
        return_credit(s, link, cls, s.pi[p, P_SIZE])


@jit
def frame_arrives(s: SimState, p: int, link: int) -> bool:
    """Frame ``p`` arrived over ``link``: True when it is handed on now, False when it was
    corrupted (dropped, or replayed under LLR) or is held behind a replay."""
    if s.prm_i[PI_FRAME_ERRORS] == 0:
        return True
    pi, li = s.pi, s.li
    flags = pi[p, P_FLAGS]
    if pi[p, P_KIND] != PKT_DATA or flags & FLAG_TRIMMED != 0:
        return True
    replay = flags & FLAG_REPLAY != 0
    rate = s.lf[link, LF_FRAME_ERROR]
    if rate > 0.0 and uniform01(s.rng) < rate:
        li[link, L_CORRUPTED] += 1
        s.cnt[C_CORRUPTED] += 1
        _credits_back(s, p, link)
        if s.prm_i[PI_LLR] == 0:
            li[link, L_DROPS] += 1
            s.cnt[C_DROPS] += 1
            free_packet(s, p)
            return False
        if not replay:
            li[link, L_LLR_OUTSTANDING] += 1
        nack_ps = max(now_ps(s), pi[p, P_TAIL_PS])  # the FCS is checked on the last bit
        back = nack_ps + li[li[link, L_REV], L_DELAY_PS]
        schedule(s, back, EV_LLR_REPLAY, p, link, ZERO)
        return False
    if replay:
        pi[p, P_FLAGS] = flags & ~FLAG_REPLAY
        outstanding = li[link, L_LLR_OUTSTANDING] - 1
        li[link, L_LLR_OUTSTANDING] = outstanding
        if outstanding == 0 and li[link, L_LLR_HOLD_HEAD] >= 0:
            li[link, L_LLR_RELEASE] = 1
        return True
    if li[link, L_LLR_OUTSTANDING] > 0:
        pi[p, P_NEXT] = -1
        tail = li[link, L_LLR_HOLD_TAIL]
        if tail < 0:
            li[link, L_LLR_HOLD_HEAD] = p
        else:
            pi[tail, P_NEXT] = p
        li[link, L_LLR_HOLD_TAIL] = p
        return False
    return True


@jit
def next_released(s: SimState, link: int) -> int:
    """The next frame held behind a replay on ``link`` that may now be handed on, or -1."""
    li = s.li
    if li[link, L_LLR_RELEASE] == 0:
        return -1
    head = li[link, L_LLR_HOLD_HEAD]
    if head < 0:
        li[link, L_LLR_RELEASE] = 0
        return -1
    nxt = s.pi[head, P_NEXT]
    li[link, L_LLR_HOLD_HEAD] = nxt
    if nxt < 0:
        li[link, L_LLR_HOLD_TAIL] = -1
    s.pi[head, P_NEXT] = -1
    return int(head)


@jit
def on_llr_replay(s: SimState, p: int, link: int) -> None:
    """The LLR_NACK for frame ``p`` reached ``link``'s sender: it replays the frame from its
    replay buffer, ahead of new frames (its buffer was freed when the frame first left)."""
    s.pi[p, P_FLAGS] |= FLAG_REPLAY
    s.li[link, L_LLR_REPLAYS] += 1
    s.cnt[C_LLR_REPLAYS] += 1
    enqueue(s, link, CONTROL_CLASS, p)
    try_send(s, link)
