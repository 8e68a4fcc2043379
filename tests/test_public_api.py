"""The public API is pinned: removing or renaming one of these names is a breaking change.

Each entry module's ``__all__`` is compared with the names below, and every name must exist;
adding a public name means adding it here too, on purpose.
"""

from __future__ import annotations

import importlib

import pytest

PUBLIC: dict[str, set[str]] = {
    "fabricplan": {"FabricPlanError", "__version__"},
    "fabricplan.spec": {
        "USER_SOURCE",
        "load_spec",
        "load_spec_file",
        "parse_spec",
        "read_spec",
        "replace_spec",
        "resolve",
    },
    "fabricplan.evaluate": {
        "applicable_profile",
        "calibrated_performance",
        "evaluate",
        "evaluate_feasible",
        "evaluate_one",
        "search_design",
        "searched_growth_risk",
    },
    "fabricplan.search_cache": {"NOT_COST", "NOT_DESIGN", "NOT_PERFORMANCE", "SearchCache"},
    "fabricplan.backends": {
        "BACKENDS",
        "AnalyticBackend",
        "Backend",
        "FakeBackend",
        "FlowBackend",
        "PacketBackend",
        "backend_names",
        "get_backend",
    },
    "fabricplan.cli.app": {"HELP", "create_app", "main"},
    "fabricplan.export.formats": {
        "EXPORT_FORMATS",
        "ExportFormat",
        "ExportOptions",
        "check_technology",
        "export_files",
    },
    "fabricplan.export.cabling": {
        "CablingPlan",
        "PlannedCable",
        "PlannedDevice",
        "cabling_plan",
        "device_names",
    },
    "fabricplan.export.verify": {"CablingComparison", "CablingDifference", "compare_cabling"},
    "fabricplan.sim.run": {
        "ANALYTIC_PATTERNS",
        "LEVELS",
        "PatternRun",
        "RunOptions",
        "RunProgress",
        "SimLevel",
        "compile_kernels",
        "run_pattern",
        "simulated_backend",
    },
    "fabricplan.sim.flow": {
        "FlowSimResult",
        "FlowSimStats",
        "TransportSpec",
        "simulate",
        "transport_for",
    },
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_entry_module_exports_exactly_the_pinned_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    assert exported == PUBLIC[module_name], (
        f"{module_name}: added {sorted(exported - PUBLIC[module_name])},"
        f" removed {sorted(PUBLIC[module_name] - exported)}"
    )
    missing = [name for name in exported if not hasattr(module, name)]
    assert not missing, f"{module_name}.__all__ names what it does not define: {missing}"


def test_the_backend_mapping_is_read_only() -> None:
    from fabricplan import backends

    assert backends.backend_names() == ["analytic", "fake", "flow", "packet"]
    with pytest.raises(TypeError):
        backends.BACKENDS["mine"] = backends.FakeBackend  # type: ignore[index]


def test_two_apps_do_not_share_commands() -> None:
    import typer

    from fabricplan.cli.app import create_app

    first, second = create_app(), create_app()
    assert first is not second
    groups = typer.main.get_command(first), typer.main.get_command(second)
    names = groups[0].list_commands(None)  # type: ignore[attr-defined]
    assert names == groups[1].list_commands(None)  # type: ignore[attr-defined]
    assert len(names) == len(set(names)) and "compare" in names
    groups[0].get_command(typer.Context(groups[0]), "init")  # type: ignore[attr-defined]
    assert groups[0].commands["init"] is not groups[1].commands["init"]  # type: ignore[attr-defined]


def test_spec_py_is_the_only_constructor_of_valid_scenarios() -> None:
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "fabricplan"
    builders = []
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = node.func if isinstance(node, ast.Call) else None
            if isinstance(called, ast.Name) and called.id == "ValidScenario":
                builders.append(path.relative_to(src).as_posix())
            if (
                isinstance(called, ast.Attribute)
                and called.attr in ("model_copy", "model_construct", "model_validate")
                and path.name != "spec.py"
                and "valid" in ast.unparse(called.value).lower()
                and "spec" in ast.unparse(node)
            ):
                builders.append(path.relative_to(src).as_posix())
    assert builders == ["spec.py"]


NO_EXAMPLE = {("fabricplan.cli.app", "main")}
"""Public functions without a runnable example: ``main`` reads ``sys.argv`` and exits."""


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_public_functions_have_numpydoc_sections_and_an_example(module_name: str) -> None:
    import inspect

    module = importlib.import_module(module_name)
    missing = []
    for name in sorted(module.__all__):
        function = getattr(module, name)
        if not inspect.isfunction(function):
            continue
        doc = inspect.getdoc(function) or ""
        signature = inspect.signature(function)
        if signature.parameters and "Parameters\n----------" not in doc:
            missing.append(f"{name}: Parameters")
        if signature.return_annotation not in (None, "None") and "Returns\n-------" not in doc:
            missing.append(f"{name}: Returns")
        if ">>>" not in doc and (module_name, name) not in NO_EXAMPLE:
            missing.append(f"{name}: example")
    assert not missing, missing
