"""A drawing of the fabric as bundles: tiers, planes, pods, scalable units and link counts.

One box per group -- node blocks (scalable units), the management hosts, their leaves, the spines
of each pod (or spine group), the cores -- and one line per bundle of cables between two groups,
labelled with its cable count. Plane 0 is drawn (every plane has the same shape; the title says
how many). When a tier has more groups than :data:`MAX_COLUMNS`, neighbouring groups merge into
one box (``SU 1-16``), so a 16k-GPU fabric stays one readable page.
"""

from __future__ import annotations

import math
from collections import Counter
from html import escape

from fabricplan.export.cabling import CablingPlan

MAX_COLUMNS = 16
"""Most boxes in one row of the drawing."""

BOX_WIDTH_PX = 110
BOX_HEIGHT_PX = 44
COLUMN_GAP_PX = 14
ROW_GAP_PX = 110
MAX_LABELLED_BUNDLES = 16
"""Above this many bundles of one size between two rows, one caption replaces their labels."""
MARGIN_PX = 30

MANAGEMENT_COLUMN = MAX_COLUMNS
"""Column of the management (subnet-manager) hosts: after the node blocks, in the node row."""

TIER_ROWS = ("core", "spine", "leaf", "node")
_COLOURS = {"core": "#6a3d9a", "spine": "#1f78b4", "leaf": "#33a02c", "node": "#b15928"}


def _groups(plan: CablingPlan) -> tuple[dict[str, tuple[str, int]], dict[tuple[str, int], int]]:
    """Device -> (tier, column index) for plane 0, and devices per (tier, column)."""
    roles = {d.name: d for d in plan.devices}
    blocks = max(plan.node_block) + 1 if plan.node_block else 1
    per_block = math.ceil(blocks / MAX_COLUMNS)
    pods = max(plan.pods * plan.design.spine_groups, 1)
    per_pod = math.ceil(pods / MAX_COLUMNS)
    where: dict[str, tuple[str, int]] = {}
    for name, block in zip(plan.node_names, plan.node_block, strict=True):
        where[name] = ("node", block // per_block)
    for device in roles.values():
        if device.plane > 0:
            continue
        if device.role == "leaf":
            where[device.name] = ("leaf", max(device.scalable_unit, 0) // per_block)
        elif device.role == "spine":
            where[device.name] = ("spine", max(device.pod, 0) // per_pod)
        elif device.role == "core":
            where[device.name] = ("core", 0)
        elif device.role == "management":
            where[device.name] = ("node", MANAGEMENT_COLUMN)
    sizes = Counter(where.values())
    return where, dict(sizes)


def _label(tier: str, column: int, plan: CablingPlan, count: int) -> str:
    blocks = max(plan.node_block) + 1 if plan.node_block else 1
    per_block = math.ceil(blocks / MAX_COLUMNS)
    if tier == "node" and column == MANAGEMENT_COLUMN:
        return f"management: {count}"
    if tier in ("node", "leaf"):
        first, last = column * per_block + 1, min((column + 1) * per_block, blocks)
        unit = f"SU {first}" if first == last else f"SU {first}-{last}"
        noun = "nodes" if tier == "node" else "leaves"
        return f"{unit}: {count} {noun}"
    if tier == "spine":
        pods = max(plan.pods * plan.design.spine_groups, 1)
        per_pod = math.ceil(pods / MAX_COLUMNS)
        first, last = column * per_pod + 1, min((column + 1) * per_pod, pods)
        noun = "pod" if plan.design.tiers == 3 else "group"
        spines = "fabric elements" if plan.scheduled else "spines"
        if pods == 1:
            return f"{count} {spines}"
        unit = f"{noun} {first}" if first == last else f"{noun}s {first}-{last}"
        return f"{unit}: {count} {spines}"
    return f"cores: {count}"


def fabric_svg(plan: CablingPlan) -> str:
    """The bundled drawing as a standalone SVG document."""
    where, sizes = _groups(plan)
    bundles: Counter[tuple[tuple[str, int], tuple[str, int]]] = Counter()
    for cable in plan.cables:
        if cable.plane != 0 or cable.a_device not in where or cable.z_device not in where:
            continue
        bundles[(where[cable.a_device], where[cable.z_device])] += 1
    rows = [tier for tier in TIER_ROWS if any(t == tier for t, _ in sizes)]
    columns = {tier: sorted(c for t, c in sizes if t == tier) for tier in rows}
    widest = max(len(c) for c in columns.values())
    width = 2 * MARGIN_PX + widest * (BOX_WIDTH_PX + COLUMN_GAP_PX)
    height = 2 * MARGIN_PX + 30 + len(rows) * (BOX_HEIGHT_PX + ROW_GAP_PX) - ROW_GAP_PX
    centre: dict[tuple[str, int], tuple[float, float]] = {}
    for r, tier in enumerate(rows):
        n = len(columns[tier])
        row_width = n * (BOX_WIDTH_PX + COLUMN_GAP_PX)
        x0 = (width - row_width) / 2 + COLUMN_GAP_PX / 2
        y = MARGIN_PX + 30 + r * (BOX_HEIGHT_PX + ROW_GAP_PX)
        for i, column in enumerate(columns[tier]):
            centre[(tier, column)] = (x0 + i * (BOX_WIDTH_PX + COLUMN_GAP_PX), y)
    design = plan.design
    drawn = " (plane 0 drawn)" if design.planes > 1 else ""
    title = (
        f"{design.technology} {design.topology}: {design.gpus} GPUs, {design.nodes} nodes,"
        f" {design.tiers} tier(s), {design.planes} plane(s){drawn};"
        f" {len(plan.cables)} cables"
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}"'
        f' viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<text x="{MARGIN_PX}" y="{MARGIN_PX}" font-size="14">{escape(title)}</text>',
    ]
    # Between two rows with many bundles of one size, one caption says it (labels would overlap).
    per_pair: dict[tuple[str, str], list[int]] = {}
    for (low, high), count in bundles.items():
        per_pair.setdefault((low[0], high[0]), []).append(count)
    captioned = {
        pair
        for pair, counts in per_pair.items()
        if len(counts) > MAX_LABELLED_BUNDLES and len(set(counts)) == 1
    }
    for (low, high), count in sorted(bundles.items()):
        if low not in centre or high not in centre:
            continue
        x1, y1 = centre[low]
        x2, y2 = centre[high]
        ax, ay = x1 + BOX_WIDTH_PX / 2, y1
        bx, by = x2 + BOX_WIDTH_PX / 2, y2 + BOX_HEIGHT_PX
        stroke = 1 + math.log10(count)
        parts.append(
            f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" stroke="#888"'
            f' stroke-width="{stroke:.1f}" stroke-opacity="0.6" class="bundle"'
            f' data-cables="{count}"/>'
        )
        if (low[0], high[0]) not in captioned:
            parts.append(
                f'<text x="{(ax + bx) / 2:.1f}" y="{(ay + by) / 2:.1f}" fill="#444"'
                f' text-anchor="middle">{count}</text>'
            )
    for lower, upper in sorted(captioned):
        counts = per_pair[(lower, upper)]
        caption_y = centre[next(k for k in centre if k[0] == lower)][1] - ROW_GAP_PX / 2
        parts.append(
            f'<text x="{MARGIN_PX}" y="{caption_y:.1f}" fill="#444" class="caption">'
            f"{len(counts)} bundles of {counts[0]} cables each: every {lower} group to every"
            f" {upper} group</text>"
        )
    for (tier, column), (left, top) in centre.items():
        label = _label(tier, column, plan, sizes[(tier, column)])
        parts.append(
            f'<rect x="{left:.1f}" y="{top:.1f}" width="{BOX_WIDTH_PX}" height="{BOX_HEIGHT_PX}"'
            f' rx="5" fill="{_COLOURS[tier]}" fill-opacity="0.15" stroke="{_COLOURS[tier]}"'
            f' class="group {tier}"/>'
        )
        parts.append(
            f'<text x="{left + BOX_WIDTH_PX / 2:.1f}" y="{top + BOX_HEIGHT_PX / 2 + 4:.1f}"'
            f' text-anchor="middle">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
