"""The packet simulator's state: a few tables of numbers with named columns.

One run is one :class:`SimState`: flows, packets, links, (link, class) queues, hosts,
switches and steps are each a 2-D ``int64`` table (one row per object, one column per field,
named by the constants below), with a ``float64`` twin where rates live. No object per packet
and no global state: numba compiles the components over these tables, and a tuple of ~25 arrays
keeps compiling fast (a tuple of hundreds of arrays took minutes).

Tables and who writes them:

- ``fi``/``ff`` flows: input (ends, size, class, step) and transport state (sequence numbers,
  rate, window, congestion-control variables, receive state, outcomes) — sender, receiver,
  DCQCN, HPCC, IB CC.
- ``fh`` (flow, field, hop): the flow's path and reverse path (links), HPCC's last INT records.
- ``pi`` packets and ``pint`` (packet, field, hop) their INT records (no hop unless the run
  is HPCC's, their one reader); ``free`` is the stack of free packet slots (``cnt[C_FREE]``
  of them).
- ``li``/``lf`` links: ends, delay, speed, PFC headroom and IB credit allocation (fixed), and the
  transmitter (busy, bytes sent, stall probes).
- ``lc`` (link, class, field): the queue (a linked list through ``pi[:, P_NEXT]``), pause state,
  credits, ingress accounting at the receiving end, watchdog.
- ``hi`` hosts (links, sender ring, faults), ``si`` switches (buffer), ``st`` steps.
- ``eg_held`` per data packet: the slot of a packet an egress leaf holds for reassembly (-1).
- ``fib_*`` the forwarding table (:mod:`fabricplan.sim.packet.forwarding`): next-hop groups
  per (switch, destination leaf), read by per-packet routing.
- ``prm_i``/``prm_f`` scalar parameters; ``cnt`` counters; ``heap``/``hmeta`` the pending
  events (:mod:`fabricplan.sim.packet.engine`).

Class 0 is the control class (ACK, NACK, CNP): strict priority, never paused, exempt from
credits. Classes 1.. carry data (a PFC priority / an IB virtual lane each).
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.engine import EV_COLS

I64 = NDArray[np.int64]
F64 = NDArray[np.float64]
F32 = NDArray[np.float32]
U64 = NDArray[np.uint64]
I8 = NDArray[np.int8]


# Flow integers (fi).
(
    F_SRC,
    F_DST,
    F_SIZE,
    F_PACKETS,
    F_LAST_PAYLOAD,
    F_CLS,
    F_STEP,
    F_OFFSET_PS,
    F_STARTED,
    F_NEXT_SEQ,
    F_MAX_SENT,
    F_SND_UNA,
    F_NEXT_SEND_PS,
    F_RX_EXPECTED,
    F_RX_UNIQUE,
    F_RX_SINCE_ACK,
    F_RX_OFFSET,
    F_RX_NACKED,
    F_LAST_CNP_PS,
    F_START_PS,
    F_FINISH_PS,
    F_ACKED_PS,
    F_RETX,
    F_TIMEOUTS,
    F_OOO,
    F_DUPS,
    F_SENT,
    F_RTO_ARMED_PS,
    F_RTO_PENDING,
    F_RING_NEXT,
    F_RING_PREV,
    F_IN_RING,
    F_DQ_ALPHA_START,
    F_DQ_CNP_SEEN,
    F_DQ_T,
    F_DQ_BC,
    F_DQ_BYTES,
    F_DQ_LAST_DEC,
    F_DQ_EPOCH,
    F_DQ_ACTIVE,
    F_DQ_PENDING,
    F_HP_STAGE,
    F_HP_LAST_SEQ,
    F_HP_HOPS,
    F_IB_CCTI,
    F_IB_TIMER_ON,
    F_INFLIGHT,
    F_RTX_PENDING,
    F_RTX_SCAN,
    F_NS_LAST_DEC_PS,
    F_TRIMS,
    F_RX_TRIM_SEQ,
    F_FLOWLET,
    F_FLOWLET_LAST_PS,
    F_EG_NEXT,
) = range(55)
FI_COLS = 55
# The retransmission timer (sender.py): F_RTO_ARMED_PS is when the running timer was last
# (re)armed, -1 while it is stopped (nothing outstanding); F_RTO_PENDING is 1 while the flow's
# one EV_RTO check is on the heap.
# Selective repeat (delivery out_of_order, sender.py): F_INFLIGHT packets sent and neither
# acknowledged nor declared lost, F_RTX_PENDING packets declared lost and not yet resent,
# F_RTX_SCAN the lowest sequence that may be one of them. F_TRIMS: trimmed headers received;
# F_RX_TRIM_SEQ (go-back-N) a trimmed sequence beyond the expected one not yet NACKed (-1).
# Flowlet routing (flowlet.py): F_FLOWLET the flow's current flowlet (its path draw),
# F_FLOWLET_LAST_PS when its last data packet reached its ingress leaf (-1: none yet).
# Egress reassembly (voq.py): F_EG_NEXT the next sequence the egress leaf hands to the host.
# Flow floats (ff).
FF_RATE, FF_LINE, FF_DQ_TARGET, FF_DQ_ALPHA, FF_HP_REF, FF_HP_U, FF_NS_CWND = range(7)
FF_COLS = 7
# Flow hop fields (fh[flow, field, hop]).
FH_PATH, FH_RPATH, FH_HP_QLEN, FH_HP_TX, FH_HP_TS = range(5)
FH_FIELDS = 5

# Packet integers (pi).
(
    P_FLOW,
    P_SEQ,
    P_SIZE,
    P_KIND,
    P_CLS,
    P_HOP,
    P_FLAGS,
    P_IN_LINK,
    P_NEXT,
    P_ACK_SEQ,
    P_TAIL_PS,
    P_HDRM,
    P_INT_N,
    P_SENT_PS,
) = range(14)
PI_COLS = 14
# P_SENT_PS: when the data packet left its NIC (echoed by its ACK: the RTT sample of NSCC).
# Packet INT fields (pint[packet, field, hop]).
PINT_QLEN, PINT_TX, PINT_TS, PINT_LINK = range(4)
PINT_FIELDS = 4

# Link integers (li).
(
    L_SRC,
    L_DST,
    L_REV,
    L_DELAY_PS,
    L_HEADROOM,
    L_CREDIT_INIT,
    L_BUSY,
    L_BUSY_UNTIL,
    L_TX_BYTES,
    L_RR,
    L_MARK_COUNT,
    L_Q_TOTAL,
    L_LAST_TX,
    L_STALL_SINCE,
    L_STALL_PS,
    L_STALL_EVENTS,
    L_PAUSE_FRAMES,
    L_DROPS,
    L_MAX_Q,
    L_TRIMS,
    L_CORRUPTED,
    L_LLR_REPLAYS,
    L_LLR_OUTSTANDING,
    L_LLR_HOLD_HEAD,
    L_LLR_HOLD_TAIL,
    L_LLR_RELEASE,
) = range(26)
LI_COLS = 26
# Link-level retry (llr.py): L_CORRUPTED frames that arrived with a bad FCS, L_LLR_REPLAYS
# frames replayed; at the receiving end L_LLR_OUTSTANDING replays not yet back, the FIFO of
# frames held behind them (head, tail through P_NEXT) and L_LLR_RELEASE set while it drains.
# Link floats (lf).
LF_PS_PER_BYTE, LF_SPEED_BPS, LF_FRAME_ERROR = range(3)
LF_COLS = 3
# LF_FRAME_ERROR: share of data frames that arrive corrupted on the link (a fault, FaultSpec).
# Link-class fields (lc[link, class, field]).
(
    Q_HEAD,
    Q_TAIL,
    Q_BYTES,
    Q_PAUSED_UNTIL,
    Q_CREDITS,
    Q_ING_BYTES,
    Q_ING_HDRM,
    Q_XOFF,
    Q_STORM_UNTIL,
    Q_WD_SINCE,
) = range(10)
LC_FIELDS = 10

# Hosts (hi).
H_UP, H_DOWN, H_RING_HEAD, H_RING_SIZE, H_WAKE_PS, H_STOP_PS, H_GRANT_PS = range(7)
HI_COLS = 7
# H_GRANT_PS: when the scheduler of the host's egress port (a VOQ fabric) can grant next.
# Switches (si).
S_BUFFER, S_SHARED, S_USED, S_SHARED_USED, S_MAX_USED, S_RR = range(6)
SI_COLS = 6
# Steps (st).
ST_WAITING, ST_REMAINING, ST_DELAY_PS, ST_START_PS, ST_FINISH_PS = range(5)
ST_COLS = 5

# Counters (cnt).
(
    C_EVENTS,
    C_DONE,
    C_DROPS,
    C_RETX,
    C_PAUSES,
    C_TIMEOUTS,
    C_DELIVERED,
    C_LAST_PROGRESS,
    C_SAMPLES,
    C_STALLS,
    C_WD_TRIGGERS,
    C_CNPS,
    C_ECN_MARKS,
    C_LOSSLESS_DROPS,
    C_FLOWS_DONE_RX,
    C_DELIVERED_BYTES,
    C_STARTED,
    C_FREE,
    C_TRIMS,
    C_VOQ_PACKETS,
    C_VOQ_WAIT_PS,
    C_CORRUPTED,
    C_LLR_REPLAYS,
    C_FLOWLETS,
    C_REASSEMBLY_HELD,
) = range(25)
N_COUNTERS = 25

# Integer parameters (prm_i).
(
    PI_HOSTS,
    PI_CLASSES,
    PI_MAX_HOPS,
    PI_FC,
    PI_CUT_THROUGH,
    PI_CUT_BYTES,
    PI_ROUTING,
    PI_DELIVERY,
    PI_ECN_ON,
    PI_PFC_STATIC_XOFF,
    PI_PFC_RESUME,
    PI_PFC_QUANTA,
    PI_PAUSE_FRAME,
    PI_NIC_XOFF,
    PI_CREDIT_BLOCK,
    PI_CC,
    PI_DQ_ALPHA_PERIOD,
    PI_DQ_DEC_PERIOD,
    PI_DQ_TIME_RESET,
    PI_DQ_BYTE_RESET,
    PI_DQ_THRESHOLD,
    PI_DQ_CNP_INTERVAL,
    PI_HP_MAX_STAGE,
    PI_HP_T,
    PI_HP_WIN,
    PI_HP_INT_BYTES,
    PI_IB_THRESHOLD,
    PI_IB_MARKING,
    PI_IB_INCREASE,
    PI_IB_LIMIT,
    PI_IB_MIN,
    PI_IB_TIMER,
    PI_PAYLOAD,
    PI_HEADER,
    PI_ACK_BYTES,
    PI_CNP_BYTES,
    PI_ACK_INTERVAL,
    PI_RTO,
    PI_WINDOW,
    PI_WD_ON,
    PI_WD_DETECT,
    PI_WD_RESTORE,
    PI_WD_POLL,
    PI_SAMPLE,
    PI_STALL_LIMIT,
    PI_END,
    PI_DQ_CLAMP,
    PI_DQ_CLAMP_AFTER_TIME,
    PI_REORDER_WINDOW,
    PI_TRIM,
    PI_TRIM_BYTES,
    PI_CELL_BYTES,
    PI_CELL_HEADER,
    PI_BASE_RTT,
    PI_BDP,
    PI_NS_TARGET,
    PI_NS_MIN_CWND,
    PI_LLR,
    PI_FLOWLET_GAP,
    PI_REASSEMBLY,
    PI_ROUTE_SALT,
    PI_FRAME_ERRORS,
) = range(62)
N_PARAM_I = 62
# Float parameters (prm_f).
(
    PF_ECN_KMIN,
    PF_ECN_KMAX,
    PF_ECN_PMAX,
    PF_PFC_ALPHA,
    PF_LOSSY_ALPHA,
    PF_DQ_G,
    PF_DQ_INIT_ALPHA,
    PF_DQ_DEC_DIVISOR,
    PF_DQ_MIN_DEC,
    PF_DQ_AI,
    PF_DQ_HAI,
    PF_DQ_MIN_RATE,
    PF_HP_ETA,
    PF_HP_AI,
    PF_HP_MIN_RATE,
    PF_IB_IPD_STEP,
    PF_IB_THRESHOLD_BUFFERS,
    PF_NS_MD_GAIN,
    PF_NS_MAX_MD,
    PF_NS_PI_GAIN,
    PF_NS_FI_GAIN,
    PF_NS_TRIM_MD,
    PF_NS_MAX_CWND_BDP,
) = range(23)
N_PARAM_F = 23


def int64(value: int) -> int:
    """``value`` as a numpy int64, typed ``int``.

    Values passed to compiled functions are int64 objects: a plain Python int constant would be
    compiled as a literal, one specialisation per value.

    >>> type(int64(3)).__name__
    'int64'
    """
    return cast(int, np.int64(value))


CONTROL_CLASS = int64(0)
"""Traffic class of ACK, NACK and CNP packets."""
PKT_DATA, PKT_ACK, PKT_NACK, PKT_CNP = (int64(k) for k in range(4))
FLAG_ECN_CE = int64(1)
"""RoCE: the ECN codepoint says Congestion Experienced (RFC 3168)."""
FLAG_FECN = int64(2)
"""InfiniBand: Forward Explicit Congestion Notification bit of the BTH (IBTA Annex A10)."""
FLAG_TRIMMED = int64(4)
"""A data packet a switch cut to its header instead of dropping it (packet trimming)."""
FLAG_REPLAY = int64(8)
"""A frame sent again from a link's replay buffer (link-level retry); cleared on arrival."""
FC_NONE, FC_PFC, FC_CREDIT, FC_SCHEDULED = (int64(k) for k in range(4))
CC_NONE, CC_DCQCN, CC_HPCC, CC_IBCC, CC_NSCC = (int64(k) for k in range(5))
DELIVER_IN_ORDER, DELIVER_REORDER, DELIVER_SELECTIVE = (int64(k) for k in range(3))
"""Receiver modes: go-back-N; placement in any order with a cumulative ACK; placement in any
order with every packet acknowledged selectively (selective repeat)."""
TX_UNSENT, TX_IN_FLIGHT, TX_ACKED = (int64(k) for k in range(3))
"""Sender state of one packet under selective repeat (``tx_state``); a lost packet is unsent."""
ROUTE_PATH, ROUTE_ADAPTIVE, ROUTE_SPRAY, ROUTE_FLOWLET = (int64(k) for k in range(4))
NEVER_PS = int64(np.iinfo(np.int64).max // 4)
"""A time later than any run (and safe to add a delay to)."""
ZERO = int64(0)
ONE = int64(1)


class SimState(NamedTuple):
    """Everything one run reads and writes (see the module docstring)."""

    fi: I64
    ff: F64
    fh: I64
    pi: I64
    pint: I64
    free: I64
    li: I64
    lf: F64
    lc: I64
    hi: I64
    si: I64
    st: I64
    step_flow_ptr: I64
    step_flows: I64
    step_dep_ptr: I64
    step_dependents: I64
    class_lossless: I64
    fib_ptr: I64
    fib_links: I64
    fib_group: I64
    fib_dest: I64
    rx_seen: I8
    tx_state: I8
    eg_held: I64
    prm_i: I64
    prm_f: F64
    cnt: I64
    heap: I64
    hmeta: I64
    samples: F32
    sample_ps: I64
    probe_links: I64
    rng: U64


def packet_table(capacity: int, max_hops: int) -> tuple[I64, I64, I64]:
    """(pi, pint, free) for ``capacity`` packet slots, all free.

    ``max_hops`` is the INT records' hops: 0 in a run without HPCC (nothing writes them).

    >>> pi, pint, free = packet_table(4, 6)
    >>> pi.shape, pint.shape, free.tolist()
    ((4, 14), (4, 4, 6), [3, 2, 1, 0])
    >>> packet_table(4, 0)[1].nbytes
    0
    """
    pi = np.zeros((capacity, PI_COLS), dtype=np.int64)
    pi[:, P_NEXT] = -1
    pint = np.zeros((capacity, PINT_FIELDS, max_hops), dtype=np.int64)
    free = np.arange(capacity - 1, -1, -1, dtype=np.int64)
    return pi, pint, free


def packet_pool_slots(packets: int, flows: int, links: int) -> int:
    """Packet slots a run starts with: every packet of the traffic plus a control packet per
    flow in flight, but no more than a few packets per link and flow can occupy at once (the
    pool grows when a run needs more, :func:`grown`).

    >>> packet_pool_slots(packets=10, flows=2, links=4), packet_pool_slots(10**6, 100, 1000)
    (1024, 8800)
    """
    return max(1024, min(packets + 4 * flows + 1024, 8 * links + 8 * flows))


def event_slots(packet_slots: int, flows: int, links: int, steps: int) -> int:
    """Pending events a run starts with room for: one per packet slot, a few per link (its
    transmitter, pause timers) and per flow (send and retransmission timers), one per step.

    >>> event_slots(1024, 2, 4, 1)
    2089
    """
    return packet_slots + 8 * links + 4 * flows + steps + 1024


def run_state_bytes(
    links: int,
    flows: int,
    packets: int,
    max_hops: int,
    classes: int,
    probes: int,
    max_samples: int,
    placed_packets: int = 1,
    selective_packets: int = 1,
    int_hops: int | None = None,
) -> dict[str, int]:
    """Bytes of a run's largest tables before any is allocated, by table: the queue samples
        (``max_samples`` x probed links, float32), the packet pool and the event heap at their
        starting sizes (:func:`packet_pool_slots`, :func:`event_slots`), the flow tables, the link
        and per-class queue tables, and the receivers' placement bitmap and the senders' per-packet
    state (``placed_packets`` and ``selective_packets`` slots, one when unused,
    :func:`~fabricplan.sim.packet.receiver.placement_tables`; ``int_hops`` the packets' INT
    hops, ``max_hops`` unless given, 0 without HPCC). An estimate from below:
        the pool and the heap may grow during the run (:func:`grown`), and the forwarding table and
        the paths are not counted.

        >>> need = run_state_bytes(links=393_216, flows=65_536, packets=65_536 * 16, max_hops=6,
        ...     classes=3, probes=393_216, max_samples=4096)
        >>> round(need["queue samples"] / 2**30, 1), round(sum(need.values()) / 2**30, 1)
        (6.0, 6.8)
    """
    slots = packet_pool_slots(packets, flows, links)
    events = event_slots(slots, flows, links, 1)
    int_hops = max_hops if int_hops is None else int_hops
    word = 8
    return {
        "queue samples": max_samples * probes * 4 + max_samples * word,
        "packet pool": slots * (PI_COLS + PINT_FIELDS * int_hops) * word,
        "event heap": events * EV_COLS * word,
        "flow tables": flows * (FI_COLS + FF_COLS + FH_FIELDS * max_hops) * word,
        "link tables": links * (LI_COLS + LF_COLS + classes * LC_FIELDS) * word,
        "placement": placed_packets + selective_packets,
    }


def grown(state: SimState, packets: int, events: int) -> SimState:
    """The same run with room for ``packets`` packet slots and ``events`` pending events."""
    out = state
    old = state.pi.shape[0]
    if packets > old:
        pi, pint, free = packet_table(packets, state.pint.shape[2])
        pi[:old] = state.pi
        pint[:old] = state.pint
        n_free = int(state.cnt[C_FREE])
        added = np.arange(packets - 1, old - 1, -1, dtype=np.int64)
        free[: added.size] = added
        free[added.size : added.size + n_free] = state.free[:n_free]
        state.cnt[C_FREE] = added.size + n_free
        out = out._replace(pi=pi, pint=pint, free=free)
    if events > state.heap.shape[0]:
        heap = np.zeros((events, EV_COLS), dtype=np.int64)
        heap[: state.heap.shape[0]] = state.heap
        out = out._replace(heap=heap)
    return out
