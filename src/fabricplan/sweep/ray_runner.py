"""Sweep points on Ray: a local runtime (``--ray``) or an existing cluster (``--ray ADDRESS``).

The only module that imports :mod:`ray` (an optional extra: ``pip install fabricplan[ray]``).
Each Ray task runs a few points through :func:`fabricplan.sweep.point.evaluate_point` (as a
local pool's call does, :func:`fabricplan.sweep.runner.evaluate_chunk`), so a point gives the same
rows as locally; Ray retries a task whose worker died (:data:`TASK_RETRIES` times) before its
points are recorded as failed.

A local runtime is started small: the given CPUs, no dashboard, the node on this machine's
loopback address; it is shut down when the sweep ends. (Ray's own servers may still bind every
interface; see docs/design.md, Sweeps.) A joined cluster is left running. Before joining, the
address is probed (one TCP connection, :data:`JOIN_PROBE_TIMEOUT_S`), so a wrong address fails
at once instead of after Ray's minutes of retries; once joined, one task asks a worker for its
fabricplan version, so a cluster whose nodes lack fabricplan, or run another version (which could
give other results), is refused before any point runs.
"""

from __future__ import annotations

import re
import socket
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
JOIN_PROBE_TIMEOUT_S = 5.0
"""How long the TCP probe of ``--ray HOST:PORT`` waits for the head to answer."""
VERSION_TIMEOUT_S = 120.0
"""How long the first task (a worker's fabricplan version) may take: a worker process starts."""
HOST_PORT = re.compile(r"^(?:ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\s]+):(?P<port>\d{1,5})$")
"""``host:port`` or ``ray://host:port`` (an IPv6 host in brackets); other addresses, such as
Ray's ``auto``, go to Ray unprobed."""


def probe_address(address: str, timeout_s: float = JOIN_PROBE_TIMEOUT_S) -> None:
    """Fail with FP1013 unless something accepts a TCP connection at ``host:port``.

    Parameters
    ----------
    address
        ``--ray``'s value; only ``host:port`` and ``ray://host:port`` are probed.
    timeout_s
        How long to wait for the connection.

    Raises
    ------
    SweepError
        FP1013 when the connection is refused or times out.

    Examples
    --------
    >>> probe_address("auto")  # not host:port: left to Ray
    >>> import socket
    >>> with socket.create_server(("127.0.0.1", 0)) as server:
    ...     probe_address(f"127.0.0.1:{server.getsockname()[1]}")
    """
    match = HOST_PORT.match(address)
    if match is None:
        return
    host, port = match["host"].strip("[]"), int(match["port"])
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SweepError(
            "FP1013",
            "--ray",
            f"cannot join the Ray cluster: nothing answers at {host}:{port} ({reason})",
            address,
            "give the head's address as `ray start --head` printed it (ray status on the head"
            " node), or use --ray alone for a runtime on this machine",
        ) from None


def worker_version() -> str:
    """The fabricplan version a worker imports (the first task on a joined cluster).

    >>> from fabricplan import __version__
    >>> worker_version() == __version__
    True
    """
    from fabricplan import __version__

    return __version__


def check_worker_version(found: str, address: str) -> None:
    """Refuse a cluster whose workers run another fabricplan version than this driver (FP1231).

    >>> from fabricplan import __version__
    >>> check_worker_version(__version__, "head:6379")
    >>> check_worker_version("0.0.0", "head:6379")
    Traceback (most recent call last):
    ...
    fabricplan.errors.SweepError: --ray: the cluster's workers run fabricplan 0.0.0, this ...
    """
    expected = worker_version()
    if found != expected:
        raise SweepError(
            "FP1231",
            "--ray",
            f"the cluster's workers run fabricplan {found}, this driver {expected}; the rows"
            " could differ",
            address,
            f"install fabricplan {expected} on every node of the cluster",
        )


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
            probe_address(self.address)
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

    def _check_workers(self, ray: Any) -> None:
        """One task on the joined cluster: its workers import this fabricplan version."""
        try:
            found = ray.get(ray.remote(worker_version).remote(), timeout=VERSION_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise SweepError(
                "FP1232",
                "--ray",
                f"no worker of the cluster ran a task within {VERSION_TIMEOUT_S:.0f} s",
                self.address,
                "check that the cluster has free CPUs (ray status on the head node)",
            ) from None
        except ray.exceptions.RayError as exc:
            raise SweepError(
                "FP1232",
                "--ray",
                "the cluster's workers cannot run fabricplan:"
                f" {str(exc).strip().splitlines()[-1][:160]}",
                self.address,
                f"install fabricplan {worker_version()} (with its [ray] extra) on every node",
            ) from None
        check_worker_version(found, self.address)

    def results(self, tasks: Sequence[PointTask]) -> Iterator[PointResult]:
        ray = _ray()
        started = self._start(ray)
        running: dict[Any, list[PointTask]] = {}
        try:
            if self.address != LOCAL_ADDRESS:
                self._check_workers(ray)
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
