"""What a simulation run is asked for: the level, the named pattern, overrides, seeds, jobs and
failures, as names and one frozen record.

This module imports nothing but the standard library and :mod:`fabricplan.sim.mechanism`'s
names, so that ``fabricplan simulate --help`` lists every choice without importing numpy, numba
or the models (the command answered in 1.9 s of CPU when it imported the run itself).
:mod:`fabricplan.sim.run` runs what a :class:`RunOptions` asks for.

>>> options = RunOptions(pattern="incast", size_bytes=2**20, senders=4)
>>> options.pattern in PATTERNS, options.tolerance == DEFAULT_TOLERANCE
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from fabricplan.sim.mechanism import RoutingName
    from fabricplan.sim.traffic import Placement

SimLevel = Literal["flow", "packet", "analytic"]
LEVELS: tuple[SimLevel, ...] = get_args(SimLevel)

PatternName = Literal[
    "all_to_all",
    "permutation",
    "incast",
    "ring_all_reduce",
    "tree_all_reduce",
    "all_gather",
    "reduce_scatter",
    "random",
    "training_step",
]
PATTERNS: tuple[PatternName, ...] = get_args(PatternName)

RunCongestionControl = Literal["none", "dcqcn", "ib_cc", "hpcc"]
"""Congestion controls a run may ask for; ``hpcc`` only at the packet level."""

DEFAULT_TOLERANCE = 0.02
"""The flow level's default epoch stretch (:mod:`fabricplan.sim.flow.fluid`): completions within
2 % of the time since the last arrival share one rate computation (0 = exact)."""


@dataclass(frozen=True)
class RunOptions:
    """What to run: the pattern and its parameters, seeds, jobs and failures."""

    pattern: PatternName = "training_step"
    size_bytes: int | None = None
    """Per rank for collectives, per flow for permutation/incast/random, gradient bytes per
    rank for ``training_step`` (``None``: the workload's own)."""
    seed: int = 0
    """Parent of the runs' seeds."""
    seeds: int = 1
    """Runs, each with its own child seed; the record gives the spread."""
    routing: RoutingName | None = None
    congestion_control: RunCongestionControl | None = None
    senders: int | None = None
    jobs: int = 1
    placement: Placement = "packed"
    qps: int = 1
    background_load: float = 0.0
    background_us: float = 1000.0
    fail_links: int = 0
    """Random leaf-spine cables down in each run (drawn from that run's seed)."""
    fail_switches: tuple[str, ...] = field(default_factory=tuple)
    tolerance: float = DEFAULT_TOLERANCE
    """Completion batching of the flow level (0 = exact)."""
    max_memory_bytes: int | None = None
    """Largest estimated memory a run may take (:mod:`fabricplan.sim.memory`); ``None``: the
    memory this machine has available when the run starts."""


__all__ = [
    "DEFAULT_TOLERANCE",
    "LEVELS",
    "PATTERNS",
    "PatternName",
    "RunCongestionControl",
    "RunOptions",
    "SimLevel",
]
