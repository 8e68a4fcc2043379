"""What every benchmark-log parser needs from a line: prefixes removed, names, hints and problems.

Real logs are not what the tool printed: ``mpirun --tag-output`` puts ``[1,0]<stdout>:`` before each
line, ``srun -l`` puts ``0:``, container logs put a timestamp; NCCL's INFO and WARN lines from every
rank are interleaved with the table. This module turns a raw line into what the tool printed and
collects the context the log gives about the run (technology, ``NCCL_*`` settings).

>>> strip_prefix("[1,0]<stdout>:#  Rank  0 Group  0 Pid   1 on node1 device  0 [0000:18:00] H100")
'#  Rank  0 Group  0 Pid   1 on node1 device  0 [0000:18:00] H100'
>>> test_in_text("mpirun -np 16 ./build/alltoall_perf -b 8 -e 8G")
'all_to_all'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricplan.measure.measurement import TechnologyHint

_PREFIXES = (
    # Open MPI --tag-output / --output tag.
    re.compile(r"^\s*\[\d+,\d+\]<(?:stdout|stderr)>:\s?"),
    # Slurm srun -l / --label.
    re.compile(r"^\s*\d+:\s"),
    # MPICH / Intel MPI -prepend-rank / -l.
    re.compile(r"^\s*\[\d+\]\s"),
    # ISO timestamps (kubectl logs --timestamps, journald exports, tee with ts).
    re.compile(r"^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\s"),
)
_MAX_PREFIXES = 4

NCCL_OPS = {
    "all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoallv": "alltoallv",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "sendrecv": "sendrecv",
    "gather": "gather",
    "scatter": "scatter",
    "hypercube": "hypercube",
}
"""nccl-tests program stems (``<stem>_perf``) to fabricplan's test names."""

_SQUASHED = {stem.replace("_", ""): name for stem, name in NCCL_OPS.items()}
_SQUASHED["alltoall"] = "all_to_all"

PERFTEST_VERBS = {
    "Send": "send",
    "Send_imm": "send",
    "RDMA_Write": "write",
    "RDMA_Write_imm": "write",
    "RDMA_Read": "read",
    "Atomic": "atomic",
}
"""perftest's ``testsStr`` verbs (the word before ``BW Test`` / ``Latency Test``)."""

# Greedy, and starting only at word starts, so that a long line costs linear time.
_PERF_RE = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z_]*)_perf(?:_mpi)?\b")
_IB_TOOL_RE = re.compile(r"\bib_(write|read|send|atomic)_(bw|lat)\b")
_STARTING_RE = re.compile(r"Collective test starting:\s*(\S+)")
_CONCLUDED_RE = re.compile(r"Collective test concluded")
_ENV_SET_RE = re.compile(r"\b(NCCL_[A-Z0-9_]+) set by environment to (\S+)")
_ENV_ASSIGN_RE = re.compile(r"(?<![A-Za-z0-9_])(NCCL_[A-Z0-9_]+)=([^\s;\"']+)")
_NET_IB_RE = re.compile(r"NET/IB\s*:\s*Using\s*(.*)")
_SOCKET_RE = re.compile(r"NET/Socket\s*:\s*Using|Using network Socket")
_NCCL_WARN_RE = re.compile(r"\bNCCL WARN\b\s*(.*)")
_FAILURE_RE = re.compile(
    r"Test (?:NCCL|CUDA|HIP) failure|NCCL error|\bSegmentation fault\b|\bBus error\b|"
    r"mpirun noticed that|\bAborted\b|Conflicting CPU frequency|Couldn't|Failed to|Unable to"
)
_MAX_PROBLEM_CHARS = 160


def strip_prefix(line: str) -> str:
    """The line as the tool printed it: launcher rank labels and timestamps removed."""
    for _ in range(_MAX_PREFIXES):
        for pattern in _PREFIXES:
            stripped = pattern.sub("", line, count=1)
            if stripped != line:
                line = stripped
                break
        else:
            return line
    return line


def collective_name(raw: str) -> str | None:
    """fabricplan's name for an nccl-tests program stem or an rccl-tests ``name`` field.

    >>> collective_name("AllReduce"), collective_name("alltoall"), collective_name("nope")
    ('all_reduce', 'all_to_all', None)
    """
    key = raw.strip().lower().replace("_", "").replace("-", "")
    return _SQUASHED.get(key)


_P2P_TEST_RE = re.compile(r"^(write|read|send|atomic)_(bw|lat)$")


def known_test_name(op: str | None, where: str = "--op") -> str | None:
    """fabricplan's name of a test given by the user (``AllReduce``, ``write_bw``), FP466 if none.

    >>> known_test_name("alltoall"), known_test_name("write_bw"), known_test_name(None)
    ('all_to_all', 'write_bw', None)
    """
    if op is None:
        return None
    name = collective_name(op) or (op if _P2P_TEST_RE.match(op) else None)
    if name is None:
        from fabricplan.errors import InputFileError

        raise InputFileError(
            "FP466",
            where,
            "is not a test fabricplan knows",
            op,
            "use e.g. all_reduce, all_gather, alltoall, write_bw, read_lat",
        )
    return name


def perftest_name(verb: str, kind: str) -> str:
    """``write_bw``, ``read_lat`` ... from perftest's verb (``RDMA_Write``) and ``BW``/``Latency``.

    >>> perftest_name("RDMA_Read", "Latency")
    'read_lat'
    """
    short = PERFTEST_VERBS.get(verb, verb.lower())
    return f"{short}_{'bw' if kind.upper().startswith('BW') else 'lat'}"


def test_in_text(text: str) -> str | None:
    """The test a command line, program name or file name names (``all_reduce_perf``,
    ``ib_write_bw``, ``allreduce-16n.log``), if any."""
    starting = _STARTING_RE.search(text)
    if starting is not None:
        text = starting.group(1)
    for match in _PERF_RE.finditer(text) if "_perf" in text else ():
        name = collective_name(match.group(1).rsplit("/", 1)[-1])
        if name is not None:
            return name
    tool = _IB_TOOL_RE.search(text)
    if tool is not None:
        return f"{tool.group(1)}_{tool.group(2)}"
    return None


def test_in_file_name(name: str) -> str | None:
    """The test a file name suggests (``nccl_allreduce_2n.log``, ``ib_write_bw.txt``)."""
    found = test_in_text(name)
    if found is not None:
        return found
    squashed = name.lower().replace("_", "").replace("-", "")
    for key in (
        "alltoallv",
        "alltoall",
        "allreduce",
        "allgather",
        "reducescatter",
        "sendrecv",
        "broadcast",
    ):
        if key in squashed:
            return _SQUASHED[key]
    for verb in ("write", "read", "send"):
        for kind in ("bw", "lat"):
            if f"{verb}{kind}" in squashed:
                return f"{verb}_{kind}"
    return None


def is_run_end(line: str) -> bool:
    """True on the line nccl-tests prints when a program finishes."""
    return _CONCLUDED_RE.search(line) is not None


def problem_in(line: str) -> str | None:
    """A short description when the line reports a problem (NCCL WARN, a failed call, a crash)."""
    warn = _NCCL_WARN_RE.search(line)
    if warn is not None:
        return f"NCCL WARN {warn.group(1).strip()}"[:_MAX_PROBLEM_CHARS]
    if _FAILURE_RE.search(line) is not None:
        return line.strip()[:_MAX_PROBLEM_CHARS]
    return None


@dataclass
class LogContext:
    """What the lines read so far say about the fabric and NCCL's settings.

    >>> ctx = LogContext()
    >>> ctx.update("node1:9:9 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE")
    >>> ctx.technology_hint
    'roce'
    """

    technology_hint: TechnologyHint | None = None
    hint_reason: str = ""
    env: dict[str, str] = field(default_factory=dict)

    def _hint(self, hint: TechnologyHint, reason: str) -> None:
        self.technology_hint = hint
        self.hint_reason = reason

    def update(self, line: str) -> None:
        """Learn from one line."""
        if "NCCL" not in line and "Link type" not in line:
            return
        for pattern in (_ENV_SET_RE, _ENV_ASSIGN_RE):
            for match in pattern.finditer(line):
                # NCCL ends "set by environment to 3." with a full stop.
                self.env[match.group(1)] = match.group(2).rstrip(".")
        net = _NET_IB_RE.search(line)
        if net is not None:
            devices = net.group(1)
            if "/RoCE" in devices:
                self._hint("roce", "NCCL NET/IB lists RoCE devices")
            elif "/IB" in devices:
                self._hint("infiniband", "NCCL NET/IB lists InfiniBand devices")
        elif _SOCKET_RE.search(line) is not None:
            self._hint("socket", "NCCL uses TCP sockets (NET/Socket)")
        self.apply_env()

    def apply_env(self) -> None:
        """Hints from settings that only mean something on RoCE."""
        version = self.env.get("NCCL_IB_ROCE_VERSION_NUM")
        if version in {"1", "2"}:
            self._hint(
                "roce_v1" if version == "1" else "roce_v2", f"NCCL_IB_ROCE_VERSION_NUM={version}"
            )
        elif self.technology_hint is None and "NCCL_IB_GID_INDEX" in self.env:
            self._hint("roce", "NCCL_IB_GID_INDEX is set (GIDs select RoCE addresses)")
