"""Routing on a :class:`~fabricplan.topology.graph.FabricGraph`: up-down on shortest paths.

:func:`route` gives each flow one path, chosen per hop either by destination (``dmodk``, the
D-mod-K rule of static fat-tree routing) or by a hash of the flow's key and the switch
(``hash``, ECMP); :func:`trunk_route` gives the trunk sequence of a sprayed flow;
:func:`path_latency_ns` the one-way latency of paths. Failed links and switches are avoided: a
hop chooses among the options that still lead to the destination. Algorithms are free
functions taking the graph first.

>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> from fabricplan.topology.graph import fabric_graph
>>> valid = parse_spec({"cluster": {"gpus": 256},
...     "fabric": {"technologies": ["infiniband"], "management_ports": 0}})
>>> graph = fabric_graph(design_fabric(valid, "infiniband"), valid)
>>> paths = route(graph, np.array([0, 0]), np.array([1, 8]), "dmodk")
>>> [int((p >= 0).sum()) for p in paths]  # same node, other rail: up-down; same rail: one leaf
[4, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from fabricplan.errors import ModelError
from fabricplan.topology.graph import SPINE_TO_CORE, SPINE_TO_LEAF, FabricGraph

IntArray = NDArray[np.int64]
Int32Array = NDArray[np.int32]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
KeyArray = NDArray[np.uint64]

RouteMode = Literal["dmodk", "hash"]

ROUTE_CHUNK_FLOWS = 1 << 15
"""Flows routed per vectorised batch (bounds the (flows x next hops) scratch matrices)."""

_GOLDEN_U64 = 0x9E3779B97F4A7C15
_MIX1_U64 = 0xBF58476D1CE4E5B9
_MIX2_U64 = 0x94D049BB133111EB


def mix64(values: KeyArray) -> KeyArray:
    """A 64-bit finaliser (SplitMix64) applied element-wise: a cheap, well-spread hash.

    Reference: G. Steele, D. Lea, C. Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014.

    >>> import numpy as np
    >>> a = mix64(np.array([1, 2], dtype=np.uint64))
    >>> bool(a[0] != a[1]), a.dtype.name
    (True, 'uint64')
    """
    x = np.asarray(values, dtype=np.uint64) + np.uint64(_GOLDEN_U64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(_MIX1_U64)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(_MIX2_U64)
    return x ^ (x >> np.uint64(31))


def path_choices(graph: FabricGraph, src: IntArray, dst: IntArray) -> IntArray:
    """Equal-cost up-down paths between each pair of host ports (on the designed fabric).

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> path_choices(g, np.array([0, 0]), np.array([8, 1])).tolist()  # 64 uplinks x 8 down
    [1, 512]
    """
    src_leaf = graph.host_leaf[np.asarray(src)]
    dst_leaf = graph.host_leaf[np.asarray(dst)]
    up1 = graph.leaf_up_links.shape[1]
    same_leaf = src_leaf == dst_leaf
    same_pod = graph.leaf_pod[src_leaf] == graph.leaf_pod[dst_leaf]
    in_pod = up1 * graph.leaf_spine_parallel
    cross = in_pod * graph.spine_up_links.shape[1] * graph.spine_core_parallel
    return np.where(same_leaf, 1, np.where(same_pod, in_pod, cross)).astype(np.int64)


def _unreachable(src: IntArray, dst: IntArray, where: BoolArray) -> ModelError:
    i = int(np.flatnonzero(where)[0])
    return ModelError(
        "FP532",
        "flow routing",
        "no live path between two host ports",
        (int(src[i]), int(dst[i])),
        "fail fewer links or switches, or keep the failed ones off every path of these hosts",
    )


def _check_domains(graph: FabricGraph, src: IntArray, dst: IntArray) -> None:
    other = graph.host_domain[src] != graph.host_domain[dst]
    if other.any():
        i = int(np.flatnonzero(other)[0])
        raise ModelError(
            "FP531",
            "flow routing",
            "the two host ports are in different planes or spine"
            " groups, which no fabric path joins",
            (int(src[i]), int(dst[i])),
            "send between NICs of the same rail and plane (NCCL PXN does so over NVLink)",
        )


def _select(options: Int32Array, ok: BoolArray | None, digit: KeyArray) -> IntArray:
    """Index of the chosen option per row: the ``digit``-th live one (modulo the live count)."""
    width = options.shape[1]
    if ok is None:
        return (digit % np.uint64(width)).astype(np.int64)
    live = ok.sum(axis=1)
    j = (digit % np.maximum(live, 1).astype(np.uint64)).astype(np.int64)
    chosen: IntArray = np.argmax(np.cumsum(ok, axis=1) > j[:, None], axis=1).astype(np.int64)
    return chosen


def _hop_digit(
    mode: RouteMode, key: KeyArray, switch_vertex: IntArray, salt: int, dmodk: IntArray
) -> KeyArray:
    if mode == "dmodk":
        return dmodk.astype(np.uint64)
    salted = mix64(np.array([salt % 2**64], dtype=np.uint64))
    return mix64(key ^ mix64(switch_vertex.astype(np.uint64) ^ salted))


@dataclass(frozen=True)
class _Reach:
    """Which switches still reach which leaves (only built when something has failed)."""

    spine_leaf: BoolArray
    """(NS, LPP): the spine has a live link down to the leaf in that slot of its pod."""
    core_leaf: BoolArray
    """(NC, PODS, LPP): the core reaches that leaf of that pod of its domain."""
    spine_remote: BoolArray
    """(NS, PODS, LPP): the aggregation switch reaches that leaf of another pod via a core."""


def _any(values: BoolArray, axis: int) -> BoolArray:
    return np.asarray(np.any(values, axis=axis), dtype=np.bool_)


def _reach(graph: FabricGraph) -> _Reach:
    alive = np.append(graph.link_alive, False)  # index -1 (absent) reads as dead
    spine_leaf = (
        _any(alive[graph.spine_down_links], axis=2)
        if graph.spines
        else np.zeros((0, graph.leaves_per_pod), dtype=np.bool_)
    )
    if graph.tiers < 3:
        empty = np.zeros((0, 0, 0), dtype=np.bool_)
        return _Reach(spine_leaf, empty, empty)
    pods = graph.pods
    domain_pod = graph.core_domain[:, None] * pods + np.arange(pods)[None, :]  # (NC, PODS)
    target_spine = graph.pod_spines[domain_pod, graph.core_group[:, None]]  # (NC, PODS)
    link_ok = _any(alive[graph.core_down_links], axis=2)  # (NC, PODS)
    core_leaf = link_ok[:, :, None] & spine_leaf[target_spine]
    up_ok = alive[graph.spine_up_links]  # (NS, U2)
    spine_remote = _any(up_ok[:, :, None, None] & core_leaf[graph.spine_up_core], axis=1)
    return _Reach(spine_leaf, core_leaf, spine_remote)


def route(
    graph: FabricGraph,
    src: IntArray,
    dst: IntArray,
    mode: RouteMode,
    key: KeyArray | None = None,
    salt: int = 0,
) -> Int32Array:
    """One up-down path per flow, as a padded matrix of link ids (-1 after the last hop).

    Parameters
    ----------
    graph
        The fabric.
    src, dst
        Host ports of each flow (same plane and spine group).
    mode
        ``dmodk``: static destination-based routing; at the leaf the uplink is ``D mod U1``
        (``D`` = :attr:`FabricGraph.host_index`), at an aggregation switch ``(D div U1) mod U2``,
        and the way down repeats the parallel-link index of the way up, as OpenSM's fat-tree
        routing does (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic for Shift
        Permutations on Real Life Fat Trees", 2010). ``hash``: every switch picks among its
        equal-cost next hops by a hash of the flow ``key`` (the 5-tuple) and its own seed.
    key
        Per-flow 64-bit key (``hash`` mode).
    salt
        Seeds the switches' hash functions (``hash`` mode).

    Returns
    -------
    numpy.ndarray
        ``(n_flows, graph.max_hops)`` int32.

    Raises
    ------
    ModelError
        FP531 when a flow joins two domains, FP532 when failures leave no path.

    Examples
    --------
    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 1024}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> p = route(g, np.array([0]), np.array([1]), "hash", np.array([7], dtype=np.uint64))
    >>> g.link_tier[p[0]].tolist()
    [0, 2, 3, 1]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = src.size
    flow_key = np.zeros(n, dtype=np.uint64) if key is None else np.asarray(key, dtype=np.uint64)
    if n > ROUTE_CHUNK_FLOWS:
        return np.concatenate(
            [
                route(
                    graph,
                    src[i : i + ROUTE_CHUNK_FLOWS],
                    dst[i : i + ROUTE_CHUNK_FLOWS],
                    mode,
                    flow_key[i : i + ROUTE_CHUNK_FLOWS],
                    salt,
                )
                for i in range(0, n, ROUTE_CHUNK_FLOWS)
            ]
        )
    out = np.full((n, graph.max_hops), -1, dtype=np.int32)
    if n == 0:
        return out
    _check_domains(graph, src, dst)
    alive = graph.link_alive
    dead_hosts = ~(alive[graph.host_up_link[src]] & alive[graph.host_down_link[dst]])
    if dead_hosts.any():
        raise _unreachable(src, dst, dead_hosts)
    reach = None if graph.all_alive else _reach(graph)
    s_leaf = graph.host_leaf[src].astype(np.int64)
    d_leaf = graph.host_leaf[dst].astype(np.int64)
    out[:, 0] = graph.host_up_link[src]
    same_leaf = s_leaf == d_leaf
    out[same_leaf, 1] = graph.host_down_link[dst[same_leaf]]
    if graph.tiers == 1 or same_leaf.all():
        return out
    d_index = graph.host_index[dst].astype(np.int64)
    up1 = graph.leaf_up_links.shape[1]
    same_pod = (graph.leaf_pod[s_leaf] == graph.leaf_pod[d_leaf]) & ~same_leaf
    cross = ~same_pod & ~same_leaf
    leaf_v0 = graph.hosts
    spine_v0 = graph.hosts + graph.leaves
    core_v0 = spine_v0 + graph.spines
    aggs = graph.spines_per_pod

    def up_hop(rows: IntArray, remote: bool) -> IntArray:
        opts = graph.leaf_up_links[s_leaf[rows]]
        nxt = graph.leaf_up_spine[s_leaf[rows]].astype(np.int64)
        ok = None
        if reach is not None:
            slot = graph.leaf_slot[d_leaf[rows]]
            if remote:
                pod = graph.leaf_pod[d_leaf[rows]] % graph.pods
                further = reach.spine_remote[nxt, pod[:, None], slot[:, None]]
            else:
                further = reach.spine_leaf[nxt, slot[:, None]]
            ok = alive[opts] & further
            reachable = _any(ok, axis=1)
            if not reachable.all():
                raise _unreachable(src[rows], dst[rows], ~reachable)
        digit = _hop_digit(mode, flow_key[rows], leaf_v0 + s_leaf[rows], salt, d_index[rows] % up1)
        pick = _select(opts, ok, digit)
        out[rows, 1] = opts[np.arange(rows.size), pick]
        return nxt[np.arange(rows.size), pick]

    def down_to_leaf(rows: IntArray, spine: IntArray, hop: int) -> None:
        opts = graph.spine_down_links[spine, graph.leaf_slot[d_leaf[rows]]]
        ok = None if reach is None else alive[np.maximum(opts, 0)] & (opts >= 0)
        digit = _hop_digit(
            mode, flow_key[rows], spine_v0 + spine, salt + 1, (d_index[rows] % up1) // aggs
        )
        pick = _select(opts, ok, digit)
        out[rows, hop] = opts[np.arange(rows.size), pick]
        out[rows, hop + 1] = graph.host_down_link[dst[rows]]

    rows = np.flatnonzero(same_pod)
    if rows.size:
        spine = up_hop(rows, remote=False)
        down_to_leaf(rows, spine, 2)
    rows = np.flatnonzero(cross)
    if rows.size:
        agg = up_hop(rows, remote=True)
        up2 = graph.spine_up_links.shape[1]
        opts = graph.spine_up_links[agg]
        nxt = graph.spine_up_core[agg].astype(np.int64)
        d_pod = (graph.leaf_pod[d_leaf[rows]] % graph.pods).astype(np.int64)
        d_slot = graph.leaf_slot[d_leaf[rows]].astype(np.int64)
        ok = None
        if reach is not None:
            ok = alive[opts] & reach.core_leaf[nxt, d_pod[:, None], d_slot[:, None]]
        digit = _hop_digit(
            mode, flow_key[rows], spine_v0 + agg, salt + 2, (d_index[rows] // up1) % up2
        )
        pick = _select(opts, ok, digit)
        take = np.arange(rows.size)
        out[rows, 2] = opts[take, pick]
        core = nxt[take, pick]
        opts = graph.core_down_links[core, d_pod]
        d_domain = graph.leaf_domain[d_leaf[rows]].astype(np.int64)
        agg_down = graph.pod_spines[d_domain * graph.pods + d_pod, graph.core_group[core]]
        ok = None
        if reach is not None:
            ok = (
                alive[np.maximum(opts, 0)]
                & (opts >= 0)
                & reach.spine_leaf[agg_down, d_slot][:, None]
            )
        digit = _hop_digit(
            mode,
            flow_key[rows],
            core_v0 + core,
            salt + 3,
            (d_index[rows] // up1) % up2 // max(graph.cores_per_group, 1),
        )
        pick = _select(opts, ok, digit)
        out[rows, 3] = opts[take, pick]
        down_to_leaf(rows, agg_down.astype(np.int64), 4)
    return out


def trunk_route(graph: FabricGraph, src: IntArray, dst: IntArray) -> Int32Array:
    """The trunks a flow sprayed evenly over all its equal-cost paths crosses (-1 padded).

    Same leaf: the two host links. Same pod: host, the source leaf's uplinks, the links into the
    destination leaf, host. Across pods: also the source pod's uplinks to the core and the links
    into the destination pod.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> trunk_route(g, np.array([0]), np.array([1]))[0].tolist()
    [0, 512, 521, 257]
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n = src.size
    out = np.full((n, graph.max_hops), -1, dtype=np.int32)
    if n == 0:
        return out
    _check_domains(graph, src, dst)
    trunk_up = graph.trunk_of_link[graph.host_up_link[src]]
    trunk_down = graph.trunk_of_link[graph.host_down_link[dst]]
    s_leaf = graph.host_leaf[src].astype(np.int64)
    d_leaf = graph.host_leaf[dst].astype(np.int64)
    same_leaf = s_leaf == d_leaf
    out[:, 0] = trunk_up
    out[same_leaf, 1] = trunk_down[same_leaf]
    if graph.tiers == 1 or same_leaf.all():
        return _checked_trunks(graph, src, dst, out)
    base = 2 * graph.hosts
    same_pod = (graph.leaf_pod[s_leaf] == graph.leaf_pod[d_leaf]) & ~same_leaf
    cross = ~same_pod & ~same_leaf
    out[same_pod, 1] = base + s_leaf[same_pod]
    out[same_pod, 2] = base + graph.leaves + d_leaf[same_pod]
    out[same_pod, 3] = trunk_down[same_pod]
    if not cross.any():
        return _checked_trunks(graph, src, dst, out)
    pods_total = graph.pods_total
    pod_base = base + 2 * graph.leaves
    out[cross, 1] = base + s_leaf[cross]
    out[cross, 2] = pod_base + graph.leaf_pod[s_leaf[cross]]
    out[cross, 3] = pod_base + pods_total + graph.leaf_pod[d_leaf[cross]]
    out[cross, 4] = base + graph.leaves + d_leaf[cross]
    out[cross, 5] = trunk_down[cross]
    return _checked_trunks(graph, src, dst, out)


def _checked_trunks(
    graph: FabricGraph, src: IntArray, dst: IntArray, out: Int32Array
) -> Int32Array:
    if not graph.all_alive:
        caps = graph.trunk_capacity_gbps()
        dead = _any(np.where(out >= 0, caps[np.maximum(out, 0)], 1.0) <= 0, axis=1)
        if dead.any():
            raise _unreachable(src, dst, dead)
    return out


def path_latency_ns(graph: FabricGraph, paths: Int32Array) -> FloatArray:
    """One-way latency of each path: its links (propagation and switches) plus both NICs; a
    hop through a scheduled fabric's fabric element takes the element's latency.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.topology.graph import fabric_graph
    >>> valid = parse_spec({"cluster": {"gpus": 256}, "fabric": {"technologies": ["roce_v2"],
    ...     "switch": {"roce_v2": "sn5600"}}})
    >>> g = fabric_graph(design_fabric(valid, "roce_v2"), valid)
    >>> import numpy as np
    >>> lat = path_latency_ns(g, route(g, np.array([0, 0]), np.array([8, 1]), "dmodk"))
    >>> bool(lat[1] > lat[0])
    True
    """
    lat = np.append(graph.link_latency_ns, 0.0)
    one_way = lat[paths].sum(axis=1) + 2 * graph.nic_latency_ns
    if graph.spine_extra_latency_ns:  # a scheduled fabric's fabric element, not a leaf
        tiers = np.append(graph.link_tier, -1)[paths]
        spine_hops = np.isin(tiers, (SPINE_TO_LEAF, SPINE_TO_CORE)).sum(axis=1)
        one_way = one_way + spine_hops * graph.spine_extra_latency_ns
    return np.asarray(one_way, dtype=np.float64)
