"""Topology for schedulers: Slurm ``topology.conf`` (tree), Slurm ``topology.yaml`` (tree and
block) and Kubernetes node labels (Topograph-style, for Kueue topology-aware scheduling).

What the scheduler is told is the distance between nodes, in the plan's blocks: a *block* is the
nodes that share their leaves -- a scalable unit of a rail-optimized fabric (every rail's leaf of
the SU connects them all, one switch hop apart), or the nodes under one leaf of a fat tree. Every
plane has the same shape, so plane 0 stands for all.

- ``topology.conf`` (topology/tree plugin): one ``SwitchName=<block> Nodes=<hostlist>`` per block
  (named after its leaves' SU, e.g. ``su001``; a fat tree's block is its leaf), a
  ``SwitchName=pod001 Switches=...`` per pod at 3 tiers, and a top switch over them
  (``spines`` at 2 tiers, ``cores`` at 3) -- Slurm topology.conf(5).
- ``topology.yaml`` (Slurm 25.05): a list of topologies; ``tree`` (the same switches as
  ``switches: [{switch, children | nodes}]``) and ``block`` (``block_sizes``: the base block of
  nodes per SU, then doubled sizes while they fit in a pod, as "successive BlockSizes must be a
  power of two larger than the prior values"; ``blocks: [{block, nodes}]``) -- Slurm
  topology.yaml(5).
- Kubernetes labels: per node ``<prefix>/leaf`` (its block), ``<prefix>/spine`` (its pod at 3
  tiers, ``spines`` at 2) and ``<prefix>/core`` (the fabric), in the style of NVIDIA Topograph's
  ``network.topology.nvidia.com/`` labels; a Kueue ``Topology`` lists them as its levels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import yaml

from fabricplan.errors import InputFileError
from fabricplan.export.cabling import CablingPlan

DEFAULT_LABEL_PREFIX = "network.topology.nvidia.com"
"""Topograph's label prefix (NVIDIA Topograph: network.topology.nvidia.com/leaf, /spine, /core)."""

_RUN = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: Iterable[str]) -> str:
    """Slurm hostlist expression of names (ranges of equal-width numbers after one prefix).

    >>> hostlist(["node-0001", "node-0002", "node-0003", "node-0007", "leaf-001"])
    'leaf-001,node-[0001-0003,0007]'
    """
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = _RUN.match(name)
        if match is None:
            plain.append(name)
            continue
        prefix, digits = match.groups()
        groups.setdefault((prefix, len(digits)), []).append(int(digits))
    parts = sorted(set(plain))
    for (prefix, width), numbers in sorted(groups.items()):
        values = sorted(set(numbers))
        if len(values) == 1:
            parts.append(f"{prefix}{values[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = prev = values[0]
        for value in [*values[1:], None]:
            if value is not None and value == prev + 1:
                prev = value
                continue
            ranges.append(
                f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}"
            )
            if value is not None:
                start = prev = value
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(sorted(parts))


def expand_hostlist(expression: str) -> list[str]:
    """The names of a hostlist expression (the reader the tests use; Slurm's own rules).

    >>> expand_hostlist("node-[0001-0003,0007],leaf-001")
    ['node-0001', 'node-0002', 'node-0003', 'node-0007', 'leaf-001']

    Raises
    ------
    InputFileError
        FP1218 for an unbalanced bracket or a range that runs backwards.
    """
    names: list[str] = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*|(?<=,),", expression):
        if not item:
            continue
        match = re.fullmatch(r"([^\[\]]*)\[([^\]]+)\]([^\[\]]*)", item)
        if match is None:
            if "[" in item or "]" in item:
                raise InputFileError(
                    "FP1218", "hostlist", "unbalanced bracket", item, "close every [ with a ]"
                )
            names.append(item)
            continue
        prefix, body, suffix = match.groups()
        for piece in body.split(","):
            low, _, high = piece.partition("-")
            width = len(low)
            end = int(high) if high else int(low)
            if end < int(low):
                raise InputFileError(
                    "FP1218", "hostlist", "range runs backwards", piece, "write LOW-HIGH"
                )
            names += [f"{prefix}{n:0{width}d}{suffix}" for n in range(int(low), end + 1)]
    return names


def _blocks(plan: CablingPlan) -> list[tuple[str, list[str], int]]:
    """(block name, nodes, pod) per block, in order."""
    members: dict[int, list[str]] = {}
    pods: dict[int, int] = {}
    for name, block, pod in zip(plan.node_names, plan.node_block, plan.node_pod, strict=True):
        members.setdefault(block, []).append(name)
        pods[block] = pod
    rail_blocks = plan.design.topology == "rail_optimized" and plan.design.tiers > 1
    out = []
    width = max(3, len(str(len(members))))
    for block in sorted(members):
        leaves = plan.block_leaves[block]
        name = f"su{block + 1:0{width}d}" if rail_blocks or not leaves else leaves[0]
        out.append((name, members[block], pods[block]))
    return out


def _tree(plan: CablingPlan) -> list[tuple[str, str, str]]:
    """(switch, kind ``nodes``/``switches``, hostlist) of the tree, leaves first."""
    blocks = _blocks(plan)
    entries = [(name, "nodes", hostlist(nodes)) for name, nodes, _ in blocks]
    tiers = plan.design.tiers
    if tiers == 1 or len(blocks) == 1:
        return entries
    if tiers == 2 or plan.pods == 1:
        entries.append(("spines", "switches", hostlist(name for name, _, _ in blocks)))
        return entries
    width = max(3, len(str(plan.pods)))
    pod_names = []
    for pod in range(plan.pods):
        members = [name for name, _, p in blocks if p == pod]
        if members:
            pod_name = f"pod{pod + 1:0{width}d}"
            pod_names.append(pod_name)
            entries.append((pod_name, "switches", hostlist(members)))
    entries.append(("cores", "switches", hostlist(pod_names)))
    return entries


def slurm_topology_conf(plan: CablingPlan) -> str:
    """Slurm ``topology.conf`` for the topology/tree plugin."""
    lines = [
        "# Slurm topology.conf (TopologyPlugin=topology/tree) written by fabricplan export.",
        f"# {plan.design.technology} {plan.design.topology}, {plan.design.tiers} tier(s),"
        f" {plan.design.planes} plane(s); a leaf-level switch is a block of nodes that share"
        " their leaves.",
    ]
    for index, block in enumerate(plan.block_leaves):
        if block:
            lines.append(f"# block {index + 1}: {hostlist(block)}")
    for name, kind, members in _tree(plan):
        key = "Nodes" if kind == "nodes" else "Switches"
        lines.append(f"SwitchName={name} {key}={members}")
    return "\n".join(lines) + "\n"


def block_sizes(plan: CablingPlan) -> list[int]:
    """The base block (nodes of a full block) and doublings that fit in one pod.

    >>> from fabricplan.spec import parse_spec
    >>> from fabricplan.topology.designer import design_fabric
    >>> from fabricplan.export.cabling import cabling_plan
    >>> valid = parse_spec({"cluster": {"gpus": 1016},
    ...     "fabric": {"technologies": ["infiniband"], "switch": {"infiniband": "qm9700"}}})
    >>> block_sizes(cabling_plan(design_fabric(valid, "infiniband"), valid))
    [32, 64, 128]
    """
    blocks = _blocks(plan)
    base = max(len(nodes) for _, nodes, _ in blocks)
    per_pod: dict[int, int] = {}
    for _, _, pod in blocks:
        per_pod[pod] = per_pod.get(pod, 0) + 1
    most = max(per_pod.values())
    sizes = [base]
    factor = 2
    while factor <= most:
        sizes.append(base * factor)
        factor *= 2
    return sizes


def slurm_topology_yaml(plan: CablingPlan) -> str:
    """Slurm 25.05 ``topology.yaml`` with a tree topology (default) and a block topology."""
    switches = [
        {"switch": name, ("nodes" if kind == "nodes" else "children"): members}
        for name, kind, members in _tree(plan)
    ]
    blocks = [{"block": name, "nodes": hostlist(nodes)} for name, nodes, _ in _blocks(plan)]
    document = [
        {"topology": "tree", "cluster_default": True, "tree": {"switches": switches}},
        {
            "topology": "block",
            "cluster_default": False,
            "block": {"block_sizes": block_sizes(plan), "blocks": blocks},
        },
    ]
    header = (
        "# Slurm topology.yaml (25.05+) written by fabricplan export: a tree topology and a block\n"
        "# topology whose base block is a block of nodes sharing their leaves (a scalable unit).\n"
    )
    return header + yaml.safe_dump(document, sort_keys=False)


def read_topology_conf(text: str) -> dict[str, tuple[str, list[str]]]:
    """Switch -> (``nodes``/``switches``, names) of a topology.conf (the tests' reader).

    Raises
    ------
    InputFileError
        FP1219 for a line that is not ``SwitchName=... Nodes=|Switches=...``.
    """
    out: dict[str, tuple[str, list[str]]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        lowered = {key.lower(): value for key, value in fields.items()}
        name = lowered.get("switchname")
        if name is None or ("nodes" in lowered) == ("switches" in lowered):
            raise InputFileError(
                "FP1219",
                f"topology.conf:{number}",
                "not a SwitchName line",
                line[:60],
                "write SwitchName=NAME Nodes=HOSTLIST or SwitchName=NAME Switches=HOSTLIST",
            )
        kind = "nodes" if "nodes" in lowered else "switches"
        out[name] = (kind, expand_hostlist(lowered[kind]))
    return out


def k8s_labels(plan: CablingPlan, prefix: str = DEFAULT_LABEL_PREFIX) -> str:
    """Node labels as YAML: ``{node: {<prefix>/block: su001, <prefix>/pod: ..., ...}}``."""
    check_label_prefix(prefix)
    blocks = _blocks(plan)
    levels: dict[str, dict[str, str]] = {}
    width = max(3, len(str(plan.pods)))
    for name, nodes, pod in blocks:
        for node in nodes:
            labels = {f"{prefix}/leaf": name}
            if plan.design.tiers == 3 and plan.pods > 1:
                labels[f"{prefix}/spine"] = f"pod{pod + 1:0{width}d}"
            elif plan.design.tiers > 1:
                labels[f"{prefix}/spine"] = "spines"
            labels[f"{prefix}/core"] = f"{plan.design.technology.replace('_', '-')}-fabric"
            levels[node] = labels
    header = (
        "# Kubernetes node labels (Topograph style) written by fabricplan export; a Kueue\n"
        f"# Topology lists the levels {prefix}/core, /spine, /leaf (spine: the pod at 3 tiers).\n"
        "# Apply: kubectl label node <node> <key>=<value> --overwrite\n"
    )
    # Node names and label values are DNS labels, YAML-safe as plain scalars: written directly
    # (PyYAML's dump takes seconds for 10k nodes).
    lines = [header.rstrip("\n")]
    for node in sorted(levels):
        lines.append(f"{node}:")
        lines += [f"  {key}: {value}" for key, value in sorted(levels[node].items())]
    return "\n".join(lines) + "\n"


_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_label_prefix(prefix: str) -> str:
    """A Kubernetes label prefix must be a DNS subdomain of at most 253 characters.

    Raises
    ------
    InputFileError
        FP1220 otherwise.
    """
    if len(prefix) > 253 or not _LABEL_PREFIX.match(prefix):
        raise InputFileError(
            "FP1220",
            "--label-prefix",
            "not a DNS subdomain (lower-case letters, digits, '-' and '.')",
            prefix,
            f"use e.g. {DEFAULT_LABEL_PREFIX}",
        )
    return prefix
