"""The names of what a performance request asks for: collectives (as nccl-tests names them) and
NCCL's algorithms (as ``NCCL_ALGO`` names them).

Standard library only, so that ``fabricplan perf --help`` lists them without importing pydantic;
:mod:`fabricplan.model.results` uses the same names.

>>> "all_reduce" in COLLECTIVES, "collnet_chain" in ALGORITHMS
(True, True)
"""

from __future__ import annotations

from typing import Literal, get_args

CollectiveName = Literal[
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "sendrecv"
]
AlgorithmName = Literal["ring", "tree", "nvls", "nvlstree", "collnet_direct", "collnet_chain"]
"""A collective algorithm as ``NCCL_ALGO`` names it (lower case)."""

COLLECTIVES: tuple[CollectiveName, ...] = get_args(CollectiveName)
ALGORITHMS: tuple[AlgorithmName, ...] = get_args(AlgorithmName)

__all__ = ["ALGORITHMS", "COLLECTIVES", "AlgorithmName", "CollectiveName"]
