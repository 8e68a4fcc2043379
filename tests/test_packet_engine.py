"""The packet simulator's event heap: time order, deterministic ties; its seeded draws."""

from __future__ import annotations

import platform

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.sim.packet.compiled import prefetch
from fabricplan.sim.packet.engine import (
    EV_A,
    EV_TIME,
    HEAP_NOW,
    HEAP_SIZE,
    event_heap,
    heap_pop,
    heap_push,
)
from fabricplan.sim.packet.splitmix import uniform01

PREFETCH_INSTRUCTION = {"x86_64": "prefetcht0", "AMD64": "prefetcht0", "aarch64": "prfm"}
"""The instruction LLVM emits for ``llvm.prefetch`` (read, keep in all levels) per machine."""


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 2)), min_size=1, max_size=200))
def test_fast_heap_pops_in_time_priority_seq_order(events: list[tuple[int, int]]) -> None:
    rows, meta = event_heap(len(events) + 1)
    for seq, (at, prio) in enumerate(events):
        heap_push(rows, meta, at, prio, 1, seq, 0, 0)
    popped = []
    while meta[HEAP_SIZE] > 0:
        slot = heap_pop(rows, meta)
        popped.append(int(rows[slot, EV_A]))
        assert meta[HEAP_NOW] == rows[slot, EV_TIME]
    expected = sorted(range(len(events)), key=lambda i: (events[i][0], events[i][1], i))
    assert popped == expected


def test_uniform_draws_are_seeded_and_uniform() -> None:
    a = np.array([7], dtype=np.uint64)
    b = np.array([7], dtype=np.uint64)
    draws_a = [uniform01(a) for _ in range(4000)]
    draws_b = [uniform01(b) for _ in range(4000)]
    assert draws_a == draws_b
    assert min(draws_a) >= 0.0 and max(draws_a) < 1.0
    assert abs(float(np.mean(draws_a)) - 0.5) < 0.02  # mean of U(0,1), 4000 draws: sd 0.0046


def test_prefetch_is_a_hint_that_compiles_to_the_machine_instruction() -> None:
    from numba import njit

    @njit(_nrt=False)
    def read_rows(table: np.ndarray, rows: np.ndarray) -> int:
        total = 0
        for r in rows:
            prefetch(table, r, 64)  # the row's second line, ahead of the read
            total += table[r, 0]
        return total

    table = np.arange(64 * 16, dtype=np.int64).reshape(64, 16)
    before = table.copy()
    rows = np.array([3, 60, 7], dtype=np.int64)
    assert read_rows(table, rows) == 3 * 16 + 60 * 16 + 7 * 16
    assert (table == before).all()
    instruction = PREFETCH_INSTRUCTION.get(platform.machine())
    if instruction is not None:
        assembly = "\n".join(read_rows.inspect_asm().values())
        assert instruction in assembly
