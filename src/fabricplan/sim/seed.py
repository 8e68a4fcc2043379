"""Seeds of the simulation runs: children of one :class:`numpy.random.SeedSequence`.

``simulate --seed S --seeds N`` runs the children ``0..N-1`` of ``SeedSequence(S)``; several jobs
of one run draw from the children of that run's seed. Consecutive integers (``S + i`` for run
``i`` and ``seed + j`` for job ``j``) would make job 1 of seed ``S`` draw exactly like job 0 of
seed ``S + 1``; spawned children never share a stream (NumPy, "Parallel random number
generation", SeedSequence spawning).

>>> spawn_seeds(0, 3) == spawn_seeds(0, 3), len(set(spawn_seeds(0, 3)))
(True, 3)
>>> spawn_seeds(0, 2)[1] != spawn_seeds(1, 1)[0]
True
"""

from __future__ import annotations

import numpy as np


def spawn_seeds(seed: int, count: int) -> tuple[int, ...]:
    """``count`` independent 32-bit seeds, the children of ``SeedSequence(seed)``.

    Parameters
    ----------
    seed
        The parent seed (a non-negative integer).
    count
        How many children.

    Returns
    -------
    tuple of int
        One seed per child, in spawn order; the same for the same ``seed`` in every process.

    Examples
    --------
    >>> len(spawn_seeds(7, 4))
    4
    """
    children = np.random.SeedSequence(seed).spawn(count)
    return tuple(int(child.generate_state(1, dtype=np.uint32)[0]) for child in children)
