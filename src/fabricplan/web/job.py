"""Background jobs of one web server: a bounded pool, progress, cancellation, kept results.

A :class:`JobBoard` belongs to one app (``create_app`` makes it, the app's shutdown closes it).
Its life cycle per job: ``queued`` (waiting for a worker) -> ``running`` (progress from 0 to 1)
-> ``done`` (result kept), ``failed`` (one-line error kept) or ``cancelled``. The work is a
function of a :data:`Report` callback; the callback raises :class:`JobStoppedError` once the job is
cancelled or over its time limit, which ends the work at its next progress report. An exception
in the work fails that job only. Finished jobs are kept until more than ``kept`` have finished;
the oldest finished job is then dropped.

>>> board = JobBoard(workers=1, kept=4)
>>> job = board.submit("demo", "two halves", lambda report: report(0.5, "half") or {"ok": 1}, 10.0)
>>> board.wait(job, 5.0).status, board.view(job).result
('done', {'ok': 1})
>>> board.close()
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fabricplan.errors import FabricPlanError
from fabricplan.web.schema import JobDocument, JobStatus

Report = Callable[[float, str], None]
"""Told ``(progress 0-1, what is running)``; raises :class:`JobStoppedError` to stop the work."""
Work = Callable[[Report], dict[str, Any]]

FINISHED: frozenset[JobStatus] = frozenset(("done", "failed", "cancelled"))


class JobStoppedError(Exception):
    """Raised inside a job's work when it is cancelled or has run past its time limit."""


@dataclass
class _Job:
    """One job's mutable state; only its board touches it, under the board's lock."""

    id: str
    kind: str
    label: str
    time_limit_s: float
    created_s: float
    status: JobStatus = "queued"
    progress: float = 0.0
    stage: str = "waiting for a worker"
    started_s: float | None = None
    finished_s: float | None = None
    error: str | None = None
    result: dict[str, Any] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    future: Future[None] | None = None

    def document(self, with_result: bool) -> JobDocument:
        end = self.finished_s or time.time()
        return JobDocument(
            id=self.id,
            kind=self.kind,
            label=self.label,
            status=self.status,
            progress=self.progress,
            stage=self.stage,
            created_s=self.created_s,
            elapsed_s=max(0.0, end - self.started_s) if self.started_s else 0.0,
            error=self.error,
            result=self.result if with_result else None,
        )


class JobBoard:
    """The jobs of one server, run by a pool of ``workers`` threads."""

    def __init__(self, workers: int = 1, kept: int = 32) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fabricplan-job")
        self._jobs: dict[str, _Job] = {}
        self._lock = threading.Lock()
        self._kept = kept
        self._closed = False

    def submit(self, kind: str, label: str, work: Work, time_limit_s: float) -> str:
        """Queue ``work``; returns the new job's id (unguessable)."""
        job = _Job(
            id=secrets.token_hex(8),
            kind=kind,
            label=label,
            time_limit_s=time_limit_s,
            created_s=time.time(),
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("the job board is closed")
            self._jobs[job.id] = job
            job.future = self._pool.submit(self._run, job, work)
        return job.id

    def _report(self, job: _Job) -> Report:
        def report(progress: float, stage: str) -> None:
            if job.cancel.is_set():
                raise JobStoppedError("cancelled")
            started = job.started_s or time.time()
            if time.time() - started > job.time_limit_s:
                raise JobStoppedError(f"stopped after its time limit of {job.time_limit_s:g} s")
            with self._lock:
                job.progress = min(1.0, max(job.progress, progress))
                job.stage = stage

        return report

    def _run(self, job: _Job, work: Work) -> None:
        with self._lock:
            if job.cancel.is_set():
                self._finish(job, "cancelled", error="cancelled before it started")
                return
            job.status = "running"
            job.started_s = time.time()
            job.stage = "starting"
        try:
            result = work(self._report(job))
        except JobStoppedError as stop:
            with self._lock:
                status: JobStatus = "cancelled" if job.cancel.is_set() else "failed"
                self._finish(job, status, error=str(stop))
        except FabricPlanError as exc:
            with self._lock:
                self._finish(job, "failed", error=str(exc))
        except Exception as exc:  # a crash in one job must not take the server down
            with self._lock:
                self._finish(job, "failed", error=f"internal error: {type(exc).__name__}: {exc}")
        else:
            with self._lock:
                job.progress = 1.0
                job.result = result
                self._finish(job, "done")

    def _finish(self, job: _Job, status: JobStatus, error: str | None = None) -> None:
        job.status = status
        job.error = error
        job.finished_s = time.time()
        job.stage = status
        finished = sorted(
            (j for j in self._jobs.values() if j.status in FINISHED),
            key=lambda j: j.finished_s or 0.0,
        )
        for old in finished[: max(0, len(finished) - self._kept)]:
            del self._jobs[old.id]

    def view(self, job_id: str) -> JobDocument | None:
        """The job with its result, or None when no such job is kept."""
        with self._lock:
            job = self._jobs.get(job_id)
            return job.document(with_result=True) if job else None

    def list(self) -> list[JobDocument]:
        """Every kept job, newest first, without results."""
        with self._lock:
            jobs = sorted(self._jobs.values(), key=lambda j: j.created_s, reverse=True)
            return [j.document(with_result=False) for j in jobs]

    def cancel(self, job_id: str) -> JobDocument | None:
        """Ask a job to stop; a queued one never starts. None when no such job is kept."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            if job.status not in FINISHED:
                job.cancel.set()
                if job.status == "queued" and job.future is not None and job.future.cancel():
                    self._finish(job, "cancelled", error="cancelled before it started")
            return job.document(with_result=False)

    def wait(self, job_id: str, timeout_s: float) -> JobDocument:
        """Block until the job has finished or ``timeout_s`` passed (for tests and scripts)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.view(job_id)
            if found is None or found.status in FINISHED or time.monotonic() > deadline:
                if found is None:
                    raise KeyError(job_id)
                return found
            time.sleep(0.01)

    def close(self) -> None:
        """Cancel every unfinished job and stop the pool (the app's shutdown calls this)."""
        with self._lock:
            self._closed = True
            for job in self._jobs.values():
                if job.status not in FINISHED:
                    job.cancel.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
