"""The public API is pinned: removing or renaming one of these names is a breaking change."""

from __future__ import annotations

import fabricplan
from fabricplan import backends, evaluate, spec


def test_top_level_names() -> None:
    assert set(fabricplan.__all__) == {"FabricPlanError", "__version__"}


def test_entry_points_exist() -> None:
    assert callable(spec.load_spec)
    assert callable(spec.parse_spec)
    assert callable(evaluate.evaluate)
    assert callable(evaluate.evaluate_one)
    assert {"analytic", "fake"} <= set(backends.backend_names())
