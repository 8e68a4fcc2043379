"""The packet level's random draws: a SplitMix64 stream held in the run's state arrays.

The state lives in the run's arrays (no global generator), so two simulations in one process
never share randomness (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
OOPSLA 2014).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.packet.compiled import jit

SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_MIX2 = np.uint64(0x94D049BB133111EB)


@jit
def uniform01(rng: NDArray[np.uint64]) -> float:
    """The next uniform draw in [0, 1) from a SplitMix64 stream held in ``rng[0]``.

    >>> import numpy as np
    >>> state = np.array([42], dtype=np.uint64)
    >>> a, b = uniform01(state), uniform01(state)
    >>> 0.0 <= a < 1.0 and a != b
    True
    """
    x = rng[0] + SPLITMIX_GAMMA
    rng[0] = x
    x = (x ^ (x >> np.uint64(30))) * SPLITMIX_MIX1
    x = (x ^ (x >> np.uint64(27))) * SPLITMIX_MIX2
    x = x ^ (x >> np.uint64(31))
    return float(x >> np.uint64(11)) * (1.0 / 9007199254740992.0)
