"""What a real adaptive-routing implementation leaves of a pooled trunk, as the flows change.

The flow level pools a trunk (all the uplinks of a leaf, all the links into a leaf, ...) under
adaptive routing, which is the ideal split. A real switch chooses from its own queues only, so
it wins back only part of what uncoordinated placement loses (Geoffray and Hoefler, HOTI 2008:
static routing 38 %, the best switch-local adaptive scheme 77 %, of the ideal on a 512-node
Clos). The loss it must win back is the trunk's imbalance under uncoordinated placement, taken
here as the per-flow ECMP hash of the flows that cross it now: if the most loaded link of a
trunk of ``L`` links carries ``max`` flows and the trunk ``total``, hashing delivers the
share ``balance = total / (L x max)``, and the implementation keeps

    ``usable share = balance + recovered x (1 - balance)``

of the trunk, ``recovered`` its :attr:`~fabricplan.model.load_balancing.AdaptiveRouting.
recovered_share`. A trunk hashing already balances (a million all-to-all flows) loses
nothing; a permutation's trunk, where hashing stacks several flows on one link, loses what the
measurement says. Single-link trunks (host links) are never affected.

>>> import numpy as np
>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 512}, "fabric": {"technologies": ["infiniband"]}})
>>> g = fabric_graph(design_fabric(valid, "infiniband"), valid)     # 16 leaves, 32 uplinks each
>>> balance = TrunkBalance(g, recovered_share=0.5, seed=0, flows=2)
>>> bool((balance.usable_share() == 1.0).all())          # no flows yet: nothing to lose
True
>>> balance.add(np.array([0, 1]), np.array([0, 8]), np.array([504, 496]))   # leaf 0 to leaf 8
>>> float(balance.usable_share().min())   # 2 flows on 32 uplinks: 2/32 + 0.5 x (1 - 2/32)
0.53125
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fabricplan.sim.path import pinned_paths
from fabricplan.topology.graph import FabricGraph


class TrunkBalance:
    """Per-trunk usable share under switch-local adaptive routing, kept as flows come and go.

    Life cycle: :meth:`add` when flows start (their ECMP placement is drawn once, with the
    run's seed), :meth:`remove` when they finish, :meth:`usable_share` before each rate
    computation.
    """

    def __init__(self, graph: FabricGraph, recovered_share: float, seed: int, flows: int) -> None:
        self.graph = graph
        self.recovered = float(recovered_share)
        self.seed = seed
        self.trunk = graph.trunk_of_link.astype(np.int64)
        alive = graph.link_alive.astype(np.float64)
        self.live_links = np.bincount(self.trunk, weights=alive, minlength=graph.trunks)
        self.count = np.zeros(graph.links)
        self.paths = np.full((flows, graph.max_hops), -1, dtype=np.int32)

    def add(self, flows: NDArray[np.int64], src: NDArray[np.int64], dst: NDArray[np.int64]) -> None:
        """Place newly started ``flows`` by hash and count them on their links."""
        if flows.size == 0:
            return
        links = pinned_paths(self.graph, "ecmp", src, dst, flows, self.seed)
        self.paths[flows, : links.shape[1]] = links
        used = links[links >= 0]
        self.count += np.bincount(used, minlength=self.graph.links)

    def remove(self, flows: NDArray[np.int64]) -> None:
        """Take finished ``flows`` off their links."""
        if flows.size == 0:
            return
        links = self.paths[flows]
        self.count -= np.bincount(links[links >= 0], minlength=self.graph.links)
        self.paths[flows] = -1

    def usable_share(self) -> NDArray[np.float64]:
        """Share of every trunk's ideal capacity the implementation delivers now (1 where the
        trunk has one live link or no flow)."""
        counts = np.where(self.graph.link_alive, self.count, 0.0)
        total = np.bincount(self.trunk, weights=counts, minlength=self.graph.trunks)
        worst = np.zeros(self.graph.trunks)
        np.maximum.at(worst, self.trunk, counts)
        loaded = (self.live_links > 1) & (worst > 0)
        balance = np.ones(self.graph.trunks)
        balance[loaded] = total[loaded] / (self.live_links[loaded] * worst[loaded])
        return balance + self.recovered * (1.0 - balance)
