"""The dispatch loop: pops events in time order and hands each to the component that owns it.

This is the packet simulator's only loop. It knows event kinds and which component function
takes each (the array form of "an event is a callback"); the networking is in the components.
It runs until every flow is done, the heap is empty, the end time or the event budget of one
call is reached, the pool or heap needs room, or nothing has been delivered for
``stall_limit`` (a deadlock: cyclic buffer dependency, or a receiver that never drains).
"""

from __future__ import annotations

from fabricplan.sim.packet.compiled import jit
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
    PI_HOSTS,
    PI_SAMPLE,
    PI_STALL_LIMIT,
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
def _arrive(s: SimState, p: int, link: int) -> None:
    """Packet ``p`` is handed to the far end of ``link``: a host or a switch."""
    if s.li[link, L_DST] < s.prm_i[PI_HOSTS]:
        flow = s.pi[p, P_FLOW]
        if on_host_arrive(s, p, link):
            on_flow_received(s, flow)
    else:
        on_switch_arrive(s, p, link)


@jit
def run_events(s: SimState, budget: int) -> int:
    """Handle up to ``budget`` events; returns a RUN_* outcome."""
    heap, hmeta, cnt = s.heap, s.hmeta, s.cnt
    flows = s.fi.shape[0]
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
        handled += 1
        cnt[C_EVENTS] += 1
        if kind == EV_TX_DONE:
            on_tx_done(s, a)
        elif kind == EV_ARRIVE:
            if frame_arrives(s, a, b):  # not corrupted, nor held behind a link's replay
                _arrive(s, a, b)
                held = next_released(s, b)
                while held >= 0:
                    _arrive(s, held, b)
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
