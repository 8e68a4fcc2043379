"""Package data (the catalog, the NCCL tuning tables, the workload presets, the uncertainty bands)
is parsed with libyaml's C parser where PyYAML has it (``input_file.load_package_yaml``): the
objects must be the ones PyYAML's pure-Python safe loader builds, type for type."""

from __future__ import annotations

from importlib import resources
from typing import Any

import pytest
import yaml

from fabricplan.input_file import SafeYamlLoader, load_package_yaml

DATA_FILES = sorted(
    f"{package}/{entry.name}"
    for package in ("analytic", "catalog")
    for entry in (resources.files(f"fabricplan.{package}") / "data").iterdir()
    if entry.name.endswith(".yaml")
)


def _typed(value: Any) -> Any:
    """``value`` with the type of every leaf kept, so that 1 and 1.0 or a date and its text
    differ."""
    if isinstance(value, dict):
        return {_typed(k): _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_the_c_parser_is_used_where_pyyaml_has_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    assert issubclass(SafeYamlLoader, yaml.CSafeLoader)


@pytest.mark.parametrize("name", DATA_FILES)
def test_package_data_parses_as_the_python_safe_loader_parses_it(name: str) -> None:
    package, file = name.split("/")
    text = (resources.files(f"fabricplan.{package}") / "data" / file).read_text(encoding="utf-8")
    assert _typed(load_package_yaml(text)) == _typed(yaml.load(text, Loader=yaml.SafeLoader))
