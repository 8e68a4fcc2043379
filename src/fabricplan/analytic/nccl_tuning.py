"""NCCL's tuning constants per release, as data (``analytic/data/nccl_tuning.yaml``).

NCCL's tuner (``src/graph/tuning.cc``) rates every (algorithm, protocol) from a table of base and
per-step latencies, per-channel bandwidth caps and a few rules; the tables changed between
releases (NVLS step 23 -> 25 us in 2.21, Tree/Simple 28 -> 4 / 14 us in 2.23, ring inter-node
steps ``2 nNodes`` -> ``2 (nNodes - 1)`` in 2.23, PAT in 2.23, per-architecture NVLS efficiency in
2.28, ...). The data file holds one entry per release line where something the model uses
changed, each read at one tag of NVIDIA/nccl; :func:`nccl_tuning` returns the tables in force for a
release, with the tag each constant was read at (:attr:`NcclTuning.sources`).

>>> tuning = nccl_tuning("2.27")
>>> tuning.line, tuning.nvlink_step_us["NVLS"]["Simple"], tuning.sources["ring_ll_bw_share"]
('2.25', 25.0, 'v2.21.5-1')
>>> nccl_tuning("2.20").ring_all_reduce_net_steps, nccl_tuning("2.23").ring_all_reduce_net_steps
('two_per_node', 'two_per_node_but_one')
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import ValidationError

from fabricplan.errors import ModelError
from fabricplan.input_file import load_package_yaml
from fabricplan.model.base import Frozen

GpuClass = Literal["volta", "ampere", "hopper", "blackwell"]
ProtocolTable = dict[str, dict[str, float]]
"""algorithm -> protocol -> value."""

OLDEST_LINE = "2.19"
"""The oldest release whose tables are stored."""


class PatTuning(Frozen):
    """PAT (parallel aggregated trees) all-gather / reduce-scatter, one GPU per node."""

    base_us: float
    log_latency_divisor: float
    per_rank_us: float
    bw_share: float


class NcclTuning(Frozen):
    """NCCL's tuning tables of one release line."""

    line: str
    """The release line whose tables these are (e.g. ``"2.25"`` for 2.25.x-2.27.x)."""
    covers: str
    tag: str
    """The NVIDIA/nccl tag whose ``tuning.cc`` set the newest of these constants."""
    base_latency_us: ProtocolTable
    nvlink_step_us: ProtocolTable
    net_step_us: ProtocolTable
    ring_all_reduce_net_steps: Literal["two_per_node", "two_per_node_but_one"]
    one_rank_per_node_tree_net_latency: bool
    ring_ll_bw_share: float
    ring_ll_one_node_gather_bw_share: float
    """Ring LL share for a one-node all-gather, reduce-scatter or broadcast (1/3 before 2.21)."""
    ring_ll128_bw_share: float
    ring_ll128_one_rank_per_node_bw_share: float
    ll_one_node_busbw_GBps: dict[str, float]  # noqa: N815 - GB/s
    ll_busbw_GBps_intel: tuple[float, float, float]  # noqa: N815 - GB/s
    ll_busbw_GBps_amd: tuple[float, float, float]  # noqa: N815 - GB/s
    """LL's ceiling across nodes on AMD hosts (``llMaxBws[1]``; its N1 column is Ampere's one-node
    figure, never used for AMD)."""
    tree_channel_busbw_GBps: dict[str, tuple[float, float, float]]  # noqa: N815
    tree_ll128_channel_busbw_GBps: dict[str, tuple[float, float, float]]  # noqa: N815
    ring_plateau_factor: dict[str, float]
    ring_plateau_min_bytes: float
    pat: PatTuning | None
    nvls_efficiency: dict[str, float] | None
    ring_ll128_channel_busbw_GBps: dict[str, tuple[float, float, float]] | None = None  # noqa: N815
    """A ring's LL128 bus bandwidth per searched channel (``perChMaxRingLL128Bws``, 1 / 2 / more
    nodes), from 2.25; ``None`` before (no such cap)."""
    tree_threads: int | None = None
    """Threads a tree channel runs whatever the size and protocol (2.22+: ``nt =
    NCCL_MAX_NTHREADS``, 640, ``topoGetAlgoInfo`` in ``src/enqueue.cc``); ``None``: the
    protocol's own count, halved for small buffers (before 2.22)."""
    nvlstree_channel_busbw_GBps: dict[str, tuple[float, float, float]] | None = None  # noqa: N815
    """NVLSTree's bus bandwidth per NVLS head (``perChMaxNVLSTreeBws``, 1 / 2 / more nodes),
    from 2.28; ``None`` before."""
    sources: dict[str, str]
    """Field -> the tag of NVIDIA/nccl whose ``src/graph/tuning.cc`` it was read from."""

    def ring_net_steps(self, collective: str, domains: int) -> int:
        """Steps of a ring that cross the network (``nInterSteps``; none in one domain).

        >>> nccl_tuning("2.19").ring_net_steps("all_reduce", 4)
        8
        >>> nccl_tuning("2.30").ring_net_steps("all_reduce", 4)
        6
        """
        if domains < 2:
            return 0
        if collective != "all_reduce":
            return domains - 1
        return (
            2 * domains if self.ring_all_reduce_net_steps == "two_per_node" else 2 * (domains - 1)
        )


def nccl_release_key(version: str) -> tuple[int, int, int]:
    """``(major, minor, patch)`` of an NCCL release number (a missing patch is 0).

    >>> nccl_release_key("2.27"), nccl_release_key("2.28.9-1")
    ((2, 27, 0), (2, 28, 9))

    Raises
    ------
    ModelError
        FP801 when ``version`` is not a release number.
    """
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-\d+)?)?", version.strip())
    if match is None:
        raise ModelError(
            "FP801",
            "nccl.version",
            "is not an NCCL release number",
            version,
            'give major.minor, e.g. "2.27"',
        )
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


@lru_cache(maxsize=1)
def _lines() -> tuple[NcclTuning, ...]:
    """Every release line's full tables (read once; the file ships inside the package)."""
    text = (resources.files("fabricplan.analytic") / "data" / "nccl_tuning.yaml").read_text(
        encoding="utf-8"
    )
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    lines: list[NcclTuning] = []
    for raw in load_package_yaml(text):
        merged.update(raw["set"])
        sources.update(dict.fromkeys(raw["set"], raw["tag"]))
        try:
            lines.append(
                NcclTuning.model_validate(
                    {
                        **merged,
                        "line": raw["line"],
                        "covers": raw["covers"],
                        "tag": raw["tag"],
                        "sources": dict(sources),
                    }
                )
            )
        except ValidationError as exc:  # a packaging bug, not a user error
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ModelError(
                "FP500",
                f"nccl_tuning.yaml: {raw['line']}.{field}",
                str(first["msg"]).lower(),
                None,
                "fix the data file",
            ) from None
    return tuple(lines)


def nccl_releases() -> tuple[str, ...]:
    """The release lines whose tables are stored, oldest first.

    >>> nccl_releases()[0], nccl_releases()[-1]
    ('2.19', '2.30')
    """
    return tuple(line.line for line in _lines())


NEWEST_READ_TAG = "v2.30.7-1"
"""The newest NVIDIA/nccl tag checked against the newest stored line (the default release)."""
DEFAULT_NCCL_VERSION = "2.30"
"""The release modelled when the spec does not say (the newest read, :data:`NEWEST_READ_TAG`)."""


def nccl_tuning(version: str = DEFAULT_NCCL_VERSION) -> NcclTuning:
    """The tables NCCL ``version`` (``major.minor[.patch]``) runs with: the newest stored line
    not after it (a missing patch is 0: ``"2.28"`` is 2.28.0).

    Raises
    ------
    ModelError
        FP801 when ``version`` is not a release number or is older than 2.19.

    Examples
    --------
    >>> nccl_tuning("2.19.3").base_latency_us["Tree"]["Simple"]
    0.0
    >>> nccl_tuning("2.23").base_latency_us["Tree"]["Simple"]
    8.4
    """
    key = nccl_release_key(version)
    chosen = None
    for line in _lines():
        if nccl_release_key(line.line) <= key:
            chosen = line
    if chosen is None:
        raise ModelError(
            "FP801",
            "nccl.version",
            f"is older than the oldest NCCL release modelled ({OLDEST_LINE})",
            version,
            f'give "{OLDEST_LINE}" or later',
        )
    return chosen
