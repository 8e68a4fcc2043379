"""A packet leaving a switch: its buffer is freed (and the ingress side told), and it is stamped
on its way out (ECN mark for DCQCN, INT record for HPCC).

Buffer accounting follows the class's link-level flow control: PFC releases the ingress
priority's shared or headroom bytes (and may send XON); credits go back to the ingress link's
sender; a lossy class frees shared-pool bytes.
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
from fabricplan.sim.packet.credit import return_credit
from fabricplan.sim.packet.ecn import ecn_mark
from fabricplan.sim.packet.pfc import pfc_release
from fabricplan.sim.packet.state import (
    C_ECN_MARKS,
    CC_HPCC,
    CONTROL_CLASS,
    FC_CREDIT,
    FC_PFC,
    FLAG_ECN_CE,
    L_TX_BYTES,
    P_FLAGS,
    P_IN_LINK,
    P_INT_N,
    P_KIND,
    P_SIZE,
    PI_CC,
    PI_ECN_ON,
    PI_FC,
    PI_MAX_HOPS,
    PINT_LINK,
    PINT_QLEN,
    PINT_TS,
    PINT_TX,
    PKT_DATA,
    Q_BYTES,
    Q_ING_BYTES,
    S_SHARED_USED,
    S_USED,
    SimState,
)


@jit
def release(s: SimState, sw: int, p: int, cls: int) -> None:
    """Free packet ``p``'s buffer at switch ``sw``."""
    size = s.pi[p, P_SIZE]
    s.si[sw, S_USED] -= size
    if cls == CONTROL_CLASS:
        return
    in_link = s.pi[p, P_IN_LINK]
    lossless = s.class_lossless[cls] != 0
    fc = s.prm_i[PI_FC]
    if lossless and fc == FC_PFC:
        pfc_release(s, sw, in_link, cls, p)
    elif lossless and fc == FC_CREDIT:
        s.lc[in_link, cls, Q_ING_BYTES] -= size
        return_credit(s, in_link, cls, size)
    else:
        s.si[sw, S_SHARED_USED] -= size


@jit
def stamp(s: SimState, link: int, p: int, cls: int, now: int) -> None:
    """ECN and INT on a data packet that starts leaving on ``link``."""
    if s.pi[p, P_KIND] != PKT_DATA:
        return
    queue = s.lc[link, cls, Q_BYTES]
    if s.prm_i[PI_ECN_ON] != 0 and ecn_mark(s, queue + s.pi[p, P_SIZE]):
        s.pi[p, P_FLAGS] |= FLAG_ECN_CE
        s.cnt[C_ECN_MARKS] += 1
    if s.prm_i[PI_CC] == CC_HPCC:
        n = s.pi[p, P_INT_N]
        if n < s.prm_i[PI_MAX_HOPS]:
            s.pint[p, PINT_QLEN, n] = queue
            s.pint[p, PINT_TX, n] = s.li[link, L_TX_BYTES]
            s.pint[p, PINT_TS, n] = now
            s.pint[p, PINT_LINK, n] = link
            s.pi[p, P_INT_N] = n + 1
