"""Pinned paths, as both simulation levels pick them: D-mod-K tables or the hashed 5-tuple.

- ``static``: destination-based tables (D-mod-K), :func:`fabricplan.topology.graph.route`.
- ``ecmp``: every switch hashes the flow's 5-tuple. The key is built from the source and
  destination ports and the flow's UDP source port; RoCEv2 NICs draw the source port per queue
  pair, so the model draws it per flow from the seed (a different seed is a different set of
  QP numbers). The switches' hash seeds also come from the seed.

A pinned flow keeps its path for its whole life; per-packet routing (``adaptive``, ``spray``)
is each level's own (a pooled trunk at the flow level, a choice per packet at the packet level).
:func:`round_trip_paths` gives both directions of every flow (the pinned route, or the D-mod-K
route as the reference path of per-packet routing), and :func:`base_rtt_ns` the largest
loaded-free round trip over them (the base RTT window-based congestion control starts from).

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
from fabricplan.units import BITS_PER_BYTE

PINNED_ROUTINGS = ("static", "ecmp")
"""Routings that fix a flow's path for its life (the others choose per packet)."""

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


def round_trip_paths(
    graph: FabricGraph,
    routing: str,
    src: NDArray[np.int64],
    dst: NDArray[np.int64],
    seed: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Forward and reverse link paths of every flow (flow ``i`` is number ``i``).

    A pinned routing (``static``, ``ecmp``) gives the path each direction keeps (the reverse
    direction hashes its own 5-tuple, as the ACKs of a RoCE flow do); per-packet routing gives
    the D-mod-K route, the reference path its base RTT is measured on.

    Parameters
    ----------
    graph
        The designed fabric.
    routing
        The routing name (:data:`PINNED_ROUTINGS` or a per-packet one).
    src, dst
        Host ports of each flow.
    seed
        Draws the UDP source ports and the switches' hash seeds (pinned routings).

    Returns
    -------
    tuple of numpy.ndarray
        ``(flows, hops)`` link ids each way, -1 past the last hop.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 64}, "fabric": {"technologies": ["roce_v2"]}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> fwd, rev = round_trip_paths(g, "ecmp", np.array([0]), np.array([9]), seed=0)
    >>> last = rev[0][rev[0] >= 0][-1]
    >>> int(fwd[0, 0]) == int(g.link_reverse[last])   # out on the NIC link, back on its twin
    True
    """
    ids = np.arange(np.asarray(src).size, dtype=np.int64)
    if routing in PINNED_ROUTINGS:
        pinned: Literal["static", "ecmp"] = "static" if routing == "static" else "ecmp"
        fwd = pinned_paths(graph, pinned, src, dst, ids, seed)
        rev = pinned_paths(graph, pinned, dst, src, ids, seed)
    else:
        fwd = route(graph, src, dst, "dmodk")
        rev = route(graph, dst, src, "dmodk")
    return np.asarray(fwd, dtype=np.int64), np.asarray(rev, dtype=np.int64)


def base_rtt_ns(
    link_delay_ns: NDArray[np.float64],
    link_speed_gbps: NDArray[np.float64],
    fwd: NDArray[np.int64],
    rev: NDArray[np.int64],
    data_bytes: int,
    ack_bytes: int,
) -> float:
    """Largest unloaded round trip over the flows: the delays both ways plus one
    ``data_bytes`` packet serialised on every forward hop and one ``ack_bytes`` packet on
    every reverse hop (HPCC's base RTT ``T``: Li et al., "HPCC: High Precision Congestion
    Control", SIGCOMM 2019, section 3.2).

    Parameters
    ----------
    link_delay_ns, link_speed_gbps
        Per link; a link of speed 0 (down) adds no serialisation.
    fwd, rev
        ``(flows, hops)`` link paths each way, -1 padded.
    data_bytes, ack_bytes
        Wire bytes of one data packet and of one acknowledgement.

    Returns
    -------
    float
        Nanoseconds (0 without flows).

    Examples
    --------
    >>> delay, speed = np.array([1000.0, 1000.0]), np.array([100.0, 100.0])
    >>> base_rtt_ns(delay, speed, np.array([[0]]), np.array([[1]]), 1000, 100)  # 2 us + 88 ns
    2088.0
    """
    if fwd.size == 0:
        return 0.0
    delay = np.append(link_delay_ns, 0.0)
    speed = np.asarray(link_speed_gbps, dtype=np.float64)
    ns_per_byte = np.append(np.where(speed > 0, BITS_PER_BYTE / np.maximum(speed, 1e-9), 0.0), 0.0)
    one_way = (delay[fwd] + data_bytes * ns_per_byte[fwd]).sum(axis=1)
    back = (delay[rev] + ack_bytes * ns_per_byte[rev]).sum(axis=1)
    return float((one_way + back).max())
