"""The dispatch loop: pops events in time order and hands each to the component that owns it.

This is the packet simulator's only loop. It knows event kinds and which component function
takes each (the array form of "an event is a callback"); the networking is in the components.
It runs until every flow is done, the heap is empty, the end time or the event budget of one
call is reached, the pool or heap needs room, or nothing has been delivered for
``stall_limit`` (a deadlock: cyclic buffer dependency, or a receiver that never drains).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit, prefetch
from fabricplan.sim.packet.credit import on_credit
from fabricplan.sim.packet.dcqcn import dcqcn_on_timer
from fabricplan.sim.packet.engine import (
    EV_A,
    EV_B,
    EV_C,
    EV_KIND,
    EV_TIME,
    HEAP_SIZE,
    heap_pop,
)
from fabricplan.sim.packet.event import (
    EV_ARRIVE,
    EV_CREDIT,
    EV_DCQCN_TIMER,
    EV_FLOW_START,
    EV_IBCC_TIMER,
    EV_KICK,
    EV_LLR_REPLAY,
    EV_NIC_WAKE,
    EV_PAUSE,
    EV_PFC_REFRESH,
    EV_RTO,
    EV_SAMPLE,
    EV_STEP_START,
    EV_TX_DONE,
    EV_VOQ_RELEASE,
    EV_WATCHDOG,
    schedule,
)
from fabricplan.sim.packet.ibcc import ibcc_on_timer
from fabricplan.sim.packet.link import on_tx_done, try_send
from fabricplan.sim.packet.llr import frame_arrives, next_released, on_llr_replay
from fabricplan.sim.packet.pfc import on_pause, on_refresh
from fabricplan.sim.packet.receiver import on_host_arrive
from fabricplan.sim.packet.sender import flow_start, on_rto
from fabricplan.sim.packet.state import (
    C_DONE,
    C_EVENTS,
    C_FREE,
    C_LAST_PROGRESS,
    C_SAMPLES,
    C_STARTED,
    F_SRC,
    H_UP,
    H_WAKE_PS,
    L_DST,
    L_Q_TOTAL,
    P_FLOW,
    PI_END,
    PI_FRAME_ERRORS,
    PI_HOSTS,
    PI_SAMPLE,
    PI_STALL_LIMIT,
    Q_HEAD,
    ZERO,
    SimState,
    int64,
)
from fabricplan.sim.packet.step import on_flow_received, on_step_start
from fabricplan.sim.packet.switch import on_switch_arrive, on_voq_release, on_watchdog

# Run outcomes.
RUN_DONE, RUN_BUDGET, RUN_GROW, RUN_IDLE, RUN_STALLED, RUN_END = (int64(k) for k in range(6))

POOL_MARGIN = 64
"""Free packet slots and heap places kept for the next event (one event allocates a few)."""


@jit
def _sample(s: SimState, now: int) -> None:
    k = s.cnt[C_SAMPLES]
    if k < s.sample_ps.size:
        s.sample_ps[k] = now
        for column in range(s.probe_links.size):
            s.samples[k, column] = s.li[s.probe_links[column], L_Q_TOTAL]
        s.cnt[C_SAMPLES] = k + 1


@jit
def _pacing(s: SimState, now: int) -> bool:
    """Some NIC waits only for a flow's rate limiter: slow, not stuck."""
    for h in range(s.hi.shape[0]):  # noqa: SIM110 - numba compiles the plain loop
        if s.hi[h, H_WAKE_PS] > now:
            return True
    return False


@jit
def _arrive(s: SimState, p: int, link: int, hosts: int) -> None:
    """Packet ``p`` is handed to the far end of ``link``: a host or a switch."""
    if s.li[link, L_DST] < hosts:
        flow = s.pi[p, P_FLOW]
        if on_host_arrive(s, p, link):
            on_flow_received(s, flow)
    else:
        on_switch_arrive(s, p, link)


LINE_BYTES = 64
"""Bytes of a cache line (x86-64, and AArch64's Neoverse cores)."""


@jit
def _prefetch_rows(s: SimState, row: int) -> None:
    """Start loading the rows event ``row`` of the heap reads first: its link and packet."""
    kind = s.heap[row, EV_KIND]
    a = s.heap[row, EV_A]
    if kind == EV_ARRIVE:
        prefetch(s.li, s.heap[row, EV_B], ZERO)
        prefetch(s.pi, a, ZERO)
        prefetch(s.pi, a, LINE_BYTES)
    elif kind == EV_TX_DONE:
        prefetch(s.li, a, ZERO)
        prefetch(s.lc, a, ZERO)
        prefetch(s.lc, a, LINE_BYTES)


@jit
def _prefetch_next(s: SimState) -> None:
    """Start loading what the next events will read, while this one is handled.

    The next event is the heap's root and the one after it one of the root's children (or an
    event this one schedules). For the children, the rows their arguments name; for the root,
    whose rows were asked for one event earlier, the rows those name in turn: an arriving
    packet's flow and path, a finished transmitter's queued packets. A prefetch changes no
    value, so the run's results are the same with or without it.
    """
    size = s.hmeta[HEAP_SIZE]
    if size == 0:
        return
    for child in range(1, min(size, 3)):
        _prefetch_rows(s, child)
    kind = s.heap[0, EV_KIND]
    a = s.heap[0, EV_A]
    if kind == EV_ARRIVE:
        flow = s.pi[a, P_FLOW]
        prefetch(s.fi, flow, ZERO)
        prefetch(s.fh, flow, ZERO)
    elif kind == EV_TX_DONE:
        for cls in range(s.lc.shape[1]):
            head = s.lc[a, cls, Q_HEAD]
            if head >= 0:
                prefetch(s.pi, head, ZERO)
                prefetch(s.pi, head, LINE_BYTES)


@jit
def run_events(s: SimState, budget: int) -> int:
    """Handle up to ``budget`` events; returns a RUN_* outcome."""
    heap, hmeta, cnt = s.heap, s.hmeta, s.cnt
    flows = s.fi.shape[0]
    hosts = s.prm_i[PI_HOSTS]
    frame_errors = s.prm_i[PI_FRAME_ERRORS] != 0
    handled = 0
    while hmeta[HEAP_SIZE] > 0:
        if cnt[C_DONE] >= flows:
            return RUN_DONE
        if handled >= budget:
            return RUN_BUDGET
        if cnt[C_FREE] < POOL_MARGIN or heap.shape[0] - hmeta[HEAP_SIZE] < POOL_MARGIN:
            return RUN_GROW
        if heap[0, EV_TIME] > s.prm_i[PI_END]:
            return RUN_END
        slot = heap_pop(heap, hmeta)
        now = heap[slot, EV_TIME]
        kind = heap[slot, EV_KIND]
        a = heap[slot, EV_A]
        b = heap[slot, EV_B]
        c = heap[slot, EV_C]
        _prefetch_next(s)
        handled += 1
        cnt[C_EVENTS] += 1
        if kind == EV_TX_DONE:
            on_tx_done(s, a)
        elif kind == EV_ARRIVE:
            # Without frame errors nothing is corrupted or held (the common, fast case).
            if not frame_errors:
                if s.li[b, L_DST] < hosts:
                    flow = s.pi[a, P_FLOW]
                    if on_host_arrive(s, a, b):
                        on_flow_received(s, flow)
                else:
                    on_switch_arrive(s, a, b)
            elif frame_arrives(s, a, b):  # not corrupted, nor held behind a link's replay
                _arrive(s, a, b, hosts)
                held = next_released(s, b)
                while held >= 0:
                    _arrive(s, held, b, hosts)
                    held = next_released(s, b)
        elif kind == EV_NIC_WAKE:
            s.hi[a, H_WAKE_PS] = 0
            try_send(s, s.hi[a, H_UP])
        elif kind == EV_PAUSE:
            if on_pause(s, a, b, c):
                try_send(s, a)
        elif kind == EV_KICK:
            try_send(s, a)
        elif kind == EV_CREDIT:
            on_credit(s, a, b, c)
            try_send(s, a)
        elif kind == EV_PFC_REFRESH:
            on_refresh(s, a, b)
        elif kind == EV_FLOW_START:
            flow_start(s, a)
            cnt[C_STARTED] += 1
            cnt[C_LAST_PROGRESS] = now
            try_send(s, s.hi[s.fi[a, F_SRC], H_UP])
        elif kind == EV_DCQCN_TIMER:
            dcqcn_on_timer(s, a, b, c)
        elif kind == EV_IBCC_TIMER:
            ibcc_on_timer(s, a)
        elif kind == EV_RTO:
            if on_rto(s, a):
                try_send(s, s.hi[s.fi[a, F_SRC], H_UP])
        elif kind == EV_STEP_START:
            on_step_start(s, a)
        elif kind == EV_SAMPLE:
            _sample(s, now)
            waiting = cnt[C_STARTED] > cnt[C_DONE]
            if waiting and now - cnt[C_LAST_PROGRESS] > s.prm_i[PI_STALL_LIMIT]:
                if not _pacing(s, now):
                    return RUN_STALLED
                cnt[C_LAST_PROGRESS] = now
            schedule(s, now + s.prm_i[PI_SAMPLE], EV_SAMPLE, ZERO, ZERO, ZERO)
        elif kind == EV_WATCHDOG:
            on_watchdog(s)
        elif kind == EV_VOQ_RELEASE:
            on_voq_release(s, a, b)
        elif kind == EV_LLR_REPLAY:
            on_llr_replay(s, a, b)
    if cnt[C_DONE] >= flows:
        return RUN_DONE
    return RUN_IDLE
