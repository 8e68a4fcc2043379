"""Run a sweep: every point not yet in the results file, on some executor, writing as it goes.

An executor turns tasks into results in any order: :class:`InProcessExecutor` (one worker, this
process), :class:`ProcessPoolExecutor` (a local pool over all cores, the default) and
:class:`fabricplan.sweep.ray_runner.RayExecutor`. The runner

1. validates every point (the first invalid one raises before any work),
2. reads what the results file already holds (same sweep, checked by fingerprint) and skips
   those point-seeds,
3. runs the rest, writing the whole table atomically every :data:`WRITE_EVERY_S` seconds or
   :data:`WRITE_EVERY_POINTS` points, and once more at the end, interrupted or not.

Stopped at any moment (Ctrl-C, SIGTERM turned into ``KeyboardInterrupt`` by the CLI, an
exception), the file holds every point finished before the last write, and after the runner's
own ``finally`` every point finished at all; rerunning the same command continues from there.
While the local pool runs, the two signals are only recorded and raised where its loop checks
(every :data:`STOP_POLL_S`), never inside a lock of ``concurrent.futures``.

The pool uses the ``forkserver`` start method where there is one (``spawn`` elsewhere): no
worker inherits threads or locks of the parent. Numba writes its disk cache atomically, so
workers may share it; for the simulating backends the first point runs in this process before
the pool starts, so that it is compiled once and every worker loads it.

>>> from fabricplan.sweep.grid import sweep_definition
>>> import tempfile, pathlib
>>> definition = sweep_definition({"cluster": {"gpus": 256}}, ["cost.years=3,5"], backend="fake")
>>> with tempfile.TemporaryDirectory() as tmp:
...     summary = run_sweep(definition, pathlib.Path(tmp) / "r.parquet", InProcessExecutor())
>>> summary.points, summary.ran, summary.failed, summary.rows
(2, 2, 0, 4)
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from fabricplan.sweep.grid import PointTask, SweepDefinition, point_tasks
from fabricplan.sweep.point import PointResult, evaluate_point, lost_point
from fabricplan.sweep.store import resumable_rows, write_results

WRITE_EVERY_S = 5.0
"""Longest time between two writes of the results file while points finish."""
WRITE_EVERY_POINTS = 200
"""Most points finished between two writes."""
MAX_ATTEMPTS = 2
"""Pools that may break while a point runs before it is recorded as failed. A worker's death
breaks every point then running in the pool; those run again, each alone, so that the one that
dies again is the one recorded."""
TASKS_PER_WORKER = 2
"""Calls queued per worker at a time: enough to keep each busy, few to lose on a crash."""
MAX_CHUNK = 8
"""Most points one worker call runs (they share one pickle; see :func:`evaluate_chunk`)."""
CHUNKS_PER_TASK_SLOT = 4
"""A call takes at most 1/(this x queued calls) of the points left, so that the last calls of a
sweep are small and no worker idles while another finishes a long chunk."""
SIMULATING_BACKENDS = ("flow", "packet")
STOP_POLL_S = 0.2
"""How often the pool's loop looks for a Ctrl-C or SIGTERM that arrived while it waited."""

RunningChunks: TypeAlias = dict[futures.Future[list[PointResult]], list[PointTask]]
"""The calls a pool is running and the points of each."""


class Executor(Protocol):
    """Runs point tasks, yielding their results as they finish (in any order)."""

    workers: int

    def results(self, tasks: Sequence[PointTask]) -> Iterator[PointResult]: ...


class Progress(Protocol):
    """Told of the sweep's size once, then of every point that finishes."""

    def start(self, points: int, done: int) -> None: ...

    def advance(self, failed: bool) -> None: ...


@dataclass(frozen=True)
class SweepSummary:
    """What a run did."""

    path: Path
    points: int
    """Points in the grid."""
    skipped: int
    """Points whose every seed the file already held."""
    ran: int
    failed: int
    """Points that failed in this run (recorded with their error)."""
    rows: int
    """Rows in the file now."""


class InProcessExecutor:
    """One worker: the points run one after another in this process."""

    workers = 1

    def __init__(self, work: Callable[[PointTask], PointResult] = evaluate_point) -> None:
        self.work = work

    def results(self, tasks: Sequence[PointTask]) -> Iterator[PointResult]:
        for task in tasks:
            yield self.work(task)


class _DeferredInterrupts:
    """Ctrl-C and SIGTERM recorded, and raised as ``KeyboardInterrupt`` only where the pool's
    loop checks (:meth:`check`): raised from a signal handler, an interrupt can land between a
    lock's acquire and its release inside ``concurrent.futures`` (``submit``'s shutdown lock,
    ``wait``'s future conditions), and the shutdown that follows then waits on that lock for
    ever. Outside the main thread (where no handler can be set) nothing is deferred."""

    def __init__(self) -> None:
        self.received = False
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _DeferredInterrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._record)
        return self

    def _record(self, signum: int, frame: Any) -> None:
        self.received = True

    def check(self) -> None:
        if self.received:
            raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def _ignore_interrupt() -> None:
    # The parent handles Ctrl-C (it reaches the whole process group) and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_method() -> str:
    """``forkserver`` where the platform has it, else ``spawn``."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


class ProcessPoolExecutor:
    """A local pool of worker processes (all cores by default).

    A worker that dies (killed, out of memory, a crash in compiled code) breaks the pool: the
    points then running go back to the queue of a new pool and run there one at a time; a
    point whose worker dies while it runs alone is recorded as failed with the reason.
    """

    def __init__(
        self,
        workers: int | None = None,
        work: Callable[[PointTask], PointResult] = evaluate_point,
        method: str | None = None,
    ) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.work = work
        self.method = method or start_method()

    def _pool(self) -> futures.ProcessPoolExecutor:
        context = multiprocessing.get_context(self.method)
        if self.method == "forkserver":
            # Imported once in the fork server, so that each worker starts with it loaded.
            context.set_forkserver_preload(["fabricplan.sweep.point"])
        return futures.ProcessPoolExecutor(
            max_workers=self.workers, mp_context=context, initializer=_ignore_interrupt
        )

    def results(self, tasks: Sequence[PointTask]) -> Iterator[PointResult]:
        queue = deque(tasks)
        attempts: dict[int, int] = {}
        window = self.workers * TASKS_PER_WORKER

        def suspect(task: PointTask) -> bool:
            return bool(attempts.get(task.index))

        def next_chunk(running: RunningChunks) -> list[PointTask]:
            # A point that was running when a worker died runs alone, so that a second death
            # is its own and no other point is blamed.
            if not queue or any(suspect(t) for chunk in running.values() for t in chunk):
                return []
            if suspect(queue[0]):
                return [queue[0]] if not running else []
            if len(running) >= window:
                return []
            size = max(1, min(MAX_CHUNK, len(queue) // (window * CHUNKS_PER_TASK_SLOT)))
            chunk: list[PointTask] = []
            for task in itertools.islice(queue, size):
                if suspect(task):
                    break
                chunk.append(task)
            return chunk

        with _DeferredInterrupts() as stop:
            yield from self._run(queue, next_chunk, suspect, attempts, stop)

    def _run(
        self,
        queue: deque[PointTask],
        next_chunk: Callable[[RunningChunks], list[PointTask]],
        suspect: Callable[[PointTask], bool],
        attempts: dict[int, int],
        stop: _DeferredInterrupts,
    ) -> Iterator[PointResult]:
        while queue:
            pool = self._pool()
            running: RunningChunks = {}
            try:
                while queue or running:
                    stop.check()
                    while chunk := next_chunk(running):
                        try:
                            future = pool.submit(evaluate_chunk, self.work, chunk)
                        except BrokenProcessPool:  # broke since the last wait: not this chunk's
                            break
                        running[future] = chunk
                        for _ in chunk:
                            queue.popleft()
                    if not running:
                        break  # the pool broke with nothing running: start a new one
                    done, _ = futures.wait(
                        running, timeout=STOP_POLL_S, return_when=futures.FIRST_COMPLETED
                    )
                    stop.check()
                    broken = False
                    for future in done:
                        try:
                            results = future.result()
                        except BrokenProcessPool:
                            broken = True
                            continue
                        running.pop(future)
                        yield from results
                    if broken:
                        suspects = sorted(
                            (t for chunk in running.values() for t in chunk),
                            key=lambda t: t.index,
                            reverse=True,
                        )
                        running.clear()
                        for task in suspects:
                            attempts[task.index] = attempts.get(task.index, 0) + 1
                            if len(suspects) == 1 or attempts[task.index] >= MAX_ATTEMPTS:
                                yield lost_point(task, "a worker process died while this point ran")
                            else:
                                queue.appendleft(task)
                        break
            finally:
                _stop(pool)


def evaluate_chunk(
    work: Callable[[PointTask], PointResult], tasks: list[PointTask]
) -> list[PointResult]:
    """Several points in one worker call: one pickle carries them, so what they share (the
    catalog's cables and prices) crosses the process boundary once.

    >>> evaluate_chunk(lambda task: task, [])
    []
    """
    return [work(task) for task in tasks]


def _stop(pool: futures.ProcessPoolExecutor) -> None:
    """Shut a pool down without waiting for points still running (they are lost, not wrong)."""
    processes: dict[Any, Any] = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        if process.is_alive():
            process.terminate()
    for process in processes.values():
        process.join(timeout=5)


def run_sweep(
    definition: SweepDefinition,
    output: str | os.PathLike[str],
    executor: Executor,
    progress: Progress | None = None,
    fresh: bool = False,
    write_every_s: float = WRITE_EVERY_S,
    write_every_points: int = WRITE_EVERY_POINTS,
) -> SweepSummary:
    """Run the sweep's missing points and write every row to ``output`` (see the module
    docstring).

    Parameters
    ----------
    definition
        The sweep (:func:`fabricplan.sweep.grid.sweep_definition`).
    output
        The Parquet results file; rows it already holds for this sweep are kept and skipped.
    executor
        Where the points run.
    progress
        Told of every point that finishes.
    fresh
        Ignore (and overwrite) whatever ``output`` holds.
    write_every_s, write_every_points
        How often the file is rewritten while points finish.

    Returns
    -------
    SweepSummary
        Points in the grid, skipped, run and failed; rows in the file.
    """
    path = Path(output)
    rows: list[dict[str, Any]] = [] if fresh else resumable_rows(path, definition)
    done = frozenset((r["point_key"], r["seed"]) for r in rows)
    tasks, points = point_tasks(definition, done)
    pending_points = {t.index for t in tasks}
    if progress is not None:
        progress.start(points, points - len(pending_points))
    ran = failed = unwritten = 0
    last_write = time.monotonic()

    def record(result: PointResult) -> None:
        nonlocal ran, failed, unwritten, last_write
        rows.extend(result.rows)
        ran += 1
        failed += result.failed
        unwritten += 1
        if progress is not None:
            progress.advance(result.failed)
        if unwritten >= write_every_points or time.monotonic() - last_write >= write_every_s:
            write_results(path, rows, definition)
            unwritten, last_write = 0, time.monotonic()

    completed = False
    try:
        queue = list(tasks)
        if queue and executor.workers > 1 and definition.backend in SIMULATING_BACKENDS:
            record(evaluate_point(queue.pop(0)))  # compile the simulator once, here
        results = executor.results(queue)
        try:
            for result in results:
                record(result)
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
        completed = True
    finally:
        # A sweep stopped before any point finished (a cluster that cannot be joined, Ctrl-C at
        # once) leaves the file as it was; a finished one always leaves its file.
        if unwritten or (completed and (fresh or not path.exists())):
            write_results(path, rows, definition)
    return SweepSummary(
        path=path,
        points=points,
        skipped=points - len(pending_points),
        ran=ran,
        failed=failed,
        rows=len(rows),
    )
