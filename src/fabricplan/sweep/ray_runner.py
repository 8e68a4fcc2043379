"""Sweep points on Ray: a local runtime (``--ray``) or an existing cluster (``--ray ADDRESS``).

The only module that imports :mod:`ray` (an optional extra: ``pip install fabricplan[ray]``).
Each Ray task runs a few points through :func:`fabricplan.sweep.point.evaluate_point` (as a
local pool's call does, :func:`fabricplan.sweep.runner.evaluate_chunk`), so a point gives the same
rows as locally; Ray retries a task whose worker died (:data:`TASK_RETRIES` times) before its
points are recorded as failed.

A local runtime is started small and private: the given CPUs, no dashboard, this machine's
loopback address; it is shut down when the sweep ends. A joined cluster is left running.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from fabricplan.errors import SweepError
from fabricplan.sweep.grid import PointTask
from fabricplan.sweep.point import PointResult, evaluate_point, lost_point
from fabricplan.sweep.runner import CHUNKS_PER_TASK_SLOT, MAX_CHUNK, evaluate_chunk

TASK_RETRIES = 2
"""Times Ray reruns a point whose worker process died."""
TASKS_PER_CPU = 2
"""Tasks in flight per CPU of the cluster."""
LOCAL_ADDRESS = "local"
"""What ``--ray`` without an address means: start a runtime on this machine."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SweepError(
            "FP1012",
            "--ray",
            "Ray is not installed",
            None,
            "pip install 'fabricplan[ray]', or drop --ray to use the local process pool",
        ) from None
    return ray


class RayExecutor:
    """Runs points as Ray tasks.

    Parameters
    ----------
    address
        ``"local"`` to start a runtime here, or the address of a running cluster
        (``ray://host:10001`` or ``host:6379``).
    cpus
        CPUs of a local runtime (default: all of this machine's).
    work
        What runs a point (a picklable function; tests replace it).
    """

    def __init__(
        self,
        address: str = LOCAL_ADDRESS,
        cpus: int | None = None,
        work: Callable[[PointTask], PointResult] = evaluate_point,
    ) -> None:
        self.address = address
        self.cpus = cpus
        self.work = work
        self.workers = cpus or 2

    def _start(self, ray: Any) -> bool:
        """Start or join a runtime; True when this executor started it (and must stop it)."""
        if ray.is_initialized():
            return False
        if self.address == LOCAL_ADDRESS:
            ray.init(
                num_cpus=self.cpus,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                log_to_driver=False,
                configure_logging=False,
            )
        else:
            try:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise SweepError(
                    "FP1013",
                    "--ray",
                    f"cannot join the Ray cluster: {str(exc).splitlines()[0][:120]}",
                    self.address,
                    "check the address (ray status on the head node) or use --ray alone",
                ) from None
        return True

    def results(self, tasks: Sequence[PointTask]) -> Iterator[PointResult]:
        ray = _ray()
        started = self._start(ray)
        running: dict[Any, list[PointTask]] = {}
        try:
            cpus = int(ray.cluster_resources().get("CPU", 1))
            self.workers = cpus
            window = cpus * TASKS_PER_CPU
            remote = ray.remote(max_retries=TASK_RETRIES)(evaluate_chunk)
            queue = list(reversed(tasks))
            while queue or running:
                while queue and len(running) < window:
                    size = max(1, min(MAX_CHUNK, len(queue) // (window * CHUNKS_PER_TASK_SLOT)))
                    chunk = [queue.pop() for _ in range(min(size, len(queue)))]
                    running[remote.remote(self.work, chunk)] = chunk
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    chunk = running.pop(ref)
                    try:
                        results: list[PointResult] = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        reason = f"the Ray task failed: {str(exc).splitlines()[0][:200]}"
                        results = [lost_point(task, reason) for task in chunk]
                    yield from results
        finally:
            for ref in running:  # interrupted: nothing left running on the cluster
                ray.cancel(ref, force=True)
            if started:
                ray.shutdown()
