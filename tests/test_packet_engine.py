"""The packet simulator's event engine: time order, deterministic ties, both forms agree."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.sim.packet.engine import (
    EV_A,
    EV_KIND,
    EV_TIME,
    HEAP_NOW,
    HEAP_SIZE,
    Engine,
    event_heap,
    heap_pop,
    heap_push,
    uniform01,
)


def test_reference_engine_runs_callbacks_in_time_order_and_ties_in_schedule_order() -> None:
    engine = Engine()
    seen: list[tuple[str, int]] = []

    def record(name: str) -> Callable[[], None]:
        return lambda: seen.append((name, engine.now_ps))

    for name, at in (("late", 30), ("a", 10), ("b", 10), ("urgent", 10)):
        prio = -1 if name == "urgent" else 0
        engine.schedule(at, record(name), priority=prio)
    assert engine.run() == 4
    assert seen == [("urgent", 10), ("a", 10), ("b", 10), ("late", 30)]


def test_reference_engine_callbacks_can_schedule_more() -> None:
    engine = Engine()
    ticks: list[int] = []

    def tick() -> None:
        ticks.append(engine.now_ps)
        if len(ticks) < 5:
            engine.schedule(engine.now_ps + 7, tick)

    engine.schedule(0, tick)
    engine.run()
    assert ticks == [0, 7, 14, 21, 28]


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


def test_fast_heap_matches_reference_engine_on_the_same_schedule() -> None:
    rng = np.random.default_rng(5)
    times = rng.integers(0, 1000, size=300)
    engine = Engine()
    order_ref: list[int] = []
    for i, at in enumerate(times):
        engine.schedule(int(at), functools.partial(order_ref.append, i))
    engine.run()
    rows, meta = event_heap(times.size)
    for i, at in enumerate(times):
        heap_push(rows, meta, int(at), 0, 3, i, 0, 0)
    order_fast = []
    while meta[HEAP_SIZE] > 0:
        slot = heap_pop(rows, meta)
        assert rows[slot, EV_KIND] == 3
        order_fast.append(int(rows[slot, EV_A]))
    assert order_fast == order_ref


def test_uniform_draws_are_seeded_and_uniform() -> None:
    a = np.array([7], dtype=np.uint64)
    b = np.array([7], dtype=np.uint64)
    draws_a = [uniform01(a) for _ in range(4000)]
    draws_b = [uniform01(b) for _ in range(4000)]
    assert draws_a == draws_b
    assert min(draws_a) >= 0.0 and max(draws_a) < 1.0
    assert abs(float(np.mean(draws_a)) - 0.5) < 0.02  # mean of U(0,1), 4000 draws: sd 0.0046
