"""The sweep report's findings from rows: crossovers, Pareto fronts, the recommendation map."""

from __future__ import annotations

from typing import Any

import pytest

from fabricplan.report.sweep import (
    SweepData,
    crossings,
    crossovers,
    pareto_fronts,
    recommendation_map,
    sweep_markdown,
    table_rows,
    winner_changes,
)


def _row(
    point: int,
    gpus: int,
    over: int,
    tech: str,
    seed: int,
    tco: float,
    step: float,
    recommended: bool,
) -> dict[str, Any]:
    return {
        "point": point,
        "cluster.gpus": gpus,
        "fabric.oversubscription": over,
        "technology": tech,
        "seed": seed,
        "tco_usd": tco,
        "step_s": step,
        "recommended": recommended,
        "error": "",
    }


def _data(rows: list[dict[str, Any]], seeds: int = 1) -> SweepData:
    return SweepData(
        path="r.parquet",
        rows=tuple(rows),
        keys=("cluster.gpus", "fabric.oversubscription"),
        x="cluster.gpus",
        technologies=("infiniband", "roce_v2"),
        backend="analytic",
        seeds=seeds,
    )


def test_crossings_interpolate_linearly() -> None:
    # a = 10 - x, b = x: equal at x = 5, between the neighbours 4 and 8.
    assert crossings([4.0, 8.0], [6.0, 2.0], [4.0, 8.0]) == [pytest.approx(5.0)]
    assert crossings([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) == []
    assert crossings([1.0, 2.0], [1.0, 2.0], [1.0, 3.0]) == [1.0]  # equal at the first x
    assert crossings([1.0, 2.0, 3.0], [1.0, 2.0, 1.0], [2.0, 2.0, 2.0]) == [2.0]  # touches once


def test_crossover_of_tco_against_cluster_size() -> None:
    # InfiniBand costs 2 per GPU + 100, RoCE 3 per GPU: RoCE is cheaper below 100 GPUs.
    rows = []
    for point, gpus in enumerate((32, 64, 128, 256)):
        rows += [
            _row(point, gpus, 1, "infiniband", 0, 2 * gpus + 100, 1.0, gpus > 100),
            _row(point, gpus, 1, "roce_v2", 0, 3 * gpus, 1.1, gpus < 100),
        ]
    found = [c for c in crossovers(_data(rows)) if c.metric == "tco_usd"]
    assert len(found) == 1
    # 2x + 100 = 3x at x = 100, between the sizes 64 and 128: both lines are straight there.
    assert found[0].x == pytest.approx(100.0)
    assert (found[0].first, found[0].second) == ("infiniband", "roce_v2")
    assert winner_changes(_data(rows)) == [
        ("fabric.oversubscription=1", "roce_v2", "infiniband", 64, 128)
    ]


def test_pareto_front_per_cluster_size_and_seed_spread() -> None:
    rows = [
        _row(0, 64, 1, "infiniband", 0, 10.0, 1.0, True),
        _row(0, 64, 1, "roce_v2", 0, 8.0, 1.2, False),
        _row(1, 64, 2, "infiniband", 0, 9.0, 1.5, False),  # dominated by roce_v2 at point 0
        _row(1, 64, 2, "roce_v2", 0, 7.0, 1.6, True),
        _row(2, 128, 1, "infiniband", 0, 20.0, 0.5, True),
        _row(2, 128, 1, "roce_v2", 0, 30.0, 0.6, False),  # dominated
    ]
    front = [(o.point, o.technology) for o in pareto_fronts(_data(rows))]
    assert front == [(1, "roce_v2"), (0, "roce_v2"), (0, "infiniband"), (2, "infiniband")]
    seeded = [_row(0, 64, 1, "infiniband", s, 10.0, 1.0 + s / 10, s == 0) for s in range(3)]
    seeded += [_row(0, 64, 1, "roce_v2", s, 8.0, 1.05, s > 0) for s in range(3)]
    header, body = table_rows(_data(seeded, seeds=3))
    assert body == [["64", "1", "roce_v2 (67%)", "$10", "1.100 (1.000-1.200)", "$8", "1.050"]]
    assert header[2] == "recommended"


def test_recommendation_map_takes_the_most_recommended() -> None:
    rows = []
    for point, (gpus, over) in enumerate([(64, 1), (64, 2), (128, 1), (128, 2)]):
        ib_wins = gpus == 128
        rows += [
            _row(point, gpus, over, "infiniband", 0, 1.0, 1.0, ib_wins),
            _row(point, gpus, over, "roce_v2", 0, 1.0, 1.0, not ib_wins),
        ]
    keys, row_values, col_values, grid = recommendation_map(_data(rows))  # type: ignore[misc]
    assert keys == ("cluster.gpus", "fabric.oversubscription")
    assert (row_values, col_values) == ([64, 128], [1, 2])
    assert grid == [
        [("roce_v2", 1.0), ("roce_v2", 1.0)],
        [("infiniband", 1.0), ("infiniband", 1.0)],
    ]
    assert "| cluster.gpus | fabric.oversubscription | recommended |" in sweep_markdown(_data(rows))
