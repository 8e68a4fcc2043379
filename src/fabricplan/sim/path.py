"""Pinned paths, as both simulation levels pick them: D-mod-K tables or the hashed 5-tuple.

- ``static``: destination-based tables (D-mod-K), :func:`fabricplan.topology.graph.route`.
- ``ecmp``: every switch hashes the flow's 5-tuple. The key is built from the source and
  destination ports and the flow's UDP source port; RoCEv2 NICs draw the source port per queue
  pair, so the model draws it per flow from the seed (a different seed is a different set of
  QP numbers). The switches' hash seeds also come from the seed.

A pinned flow keeps its path for its whole life; per-packet routing (``adaptive``, ``spray``)
is each level's own (a pooled trunk at the flow level, a choice per packet at the packet level).

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
...     "switch": {"roce_v2": "sn5600"}}})  # a two-tier leaf-spine
>>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
>>> src, dst, ids = np.zeros(4, dtype=np.int64), np.array([1, 9, 17, 25]), np.arange(4)
>>> ecmp = pinned_paths(g, "ecmp", src, dst, ids, seed=0)
>>> [int(n) for n in (ecmp >= 0).sum(axis=1)]   # NIC -> leaf -> spine -> leaf -> NIC
[4, 4, 4, 4]
>>> bool((ecmp[:, 1] != pinned_paths(g, "ecmp", src, dst, ids, seed=1)[:, 1]).any())
True
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from fabricplan.topology.graph import FabricGraph
from fabricplan.topology.routing import mix64, route

ROCE_UDP_DST_PORT = 4791
"""RoCEv2 UDP destination port (IBTA Annex A17); part of the hashed 5-tuple."""
ROCE_UDP_SRC_PORT_MIN = 0xC000
ROCE_UDP_SRC_PORT_COUNT = 0x4000
"""RoCEv2 UDP source ports come from the ephemeral range 0xC000-0xFFFF (Linux
``IB_ROCE_UDP_ENCAP_VALID_PORT_MIN/MAX``; docs/refs.md B.5)."""


def flow_keys(
    src: NDArray[np.int64], dst: NDArray[np.int64], flow_id: NDArray[np.int64], seed: int
) -> NDArray[np.uint64]:
    """The hashed 5-tuple of each flow: ports as addresses, UDP source port per flow (seeded).

    >>> import numpy as np
    >>> a = flow_keys(np.array([0]), np.array([1]), np.array([0]), seed=0)
    >>> b = flow_keys(np.array([0]), np.array([1]), np.array([0]), seed=1)
    >>> bool(a[0] != b[0])
    True
    """
    qp = mix64(flow_id.astype(np.uint64) ^ mix64(np.full(flow_id.shape, seed, dtype=np.uint64)))
    sport = ROCE_UDP_SRC_PORT_MIN + (qp % np.uint64(ROCE_UDP_SRC_PORT_COUNT))
    key = mix64(src.astype(np.uint64) << np.uint64(32) | dst.astype(np.uint64))
    key = mix64(key ^ (sport << np.uint64(16) | np.uint64(ROCE_UDP_DST_PORT)))
    return key


def pinned_paths(
    graph: FabricGraph,
    routing: Literal["static", "ecmp"],
    src: NDArray[np.int64],
    dst: NDArray[np.int64],
    flow_id: NDArray[np.int64],
    seed: int,
) -> NDArray[np.int32]:
    """Link path of each flow (padded with -1) under D-mod-K tables or the 5-tuple hash.

    Parameters
    ----------
    graph
        The designed fabric.
    routing
        ``static`` (destination tables) or ``ecmp`` (per-flow hash at every switch).
    src, dst
        Host ports of each flow.
    flow_id
        Each flow's number (draws its UDP source port).
    seed
        Draws the UDP source ports and the switches' hash seeds.

    Returns
    -------
    numpy.ndarray
        ``(flows, hops)`` link ids, -1 past the last hop.
    """
    if routing == "static":
        return route(graph, src, dst, "dmodk")
    return route(graph, src, dst, "hash", flow_keys(src, dst, flow_id, seed), salt=seed)
