"""The backends a user is offered: analytic, flow and packet; the tests' ``fake`` stand-in is
refused on every command line unless the test switch is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricplan.backends import TEST_BACKEND_ENV, USER_BACKENDS, backend_names, get_backend
from fabricplan.cli.app import create_app
from fabricplan.errors import SpecError

RUNNER = CliRunner()
SPEC = "cluster: {gpus: 64}\n"


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "SPEC", "--backend", "fake"],
        ["perf", "SPEC", "--backend", "fake"],
        ["sweep", "SPEC", "--vary", "cost.years=3,5", "--backend", "fake", "-o", "OUT"],
    ],
)
def test_a_command_line_is_not_offered_the_fake_backend(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_BACKEND_ENV, raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "r.parquet"
    argv = [str(spec) if a == "SPEC" else str(out) if a == "OUT" else a for a in args]
    result = RUNNER.invoke(create_app(), argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "error: --backend: unknown backend ('fake'); use one of analytic, flow, packet [FP117]"
    )
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_the_python_api_keeps_the_stand_in_and_names_only_the_users_choices() -> None:
    assert set(USER_BACKENDS) == set(backend_names()) - {"fake"}
    assert get_backend("fake").name == "fake"
    with pytest.raises(SpecError) as caught:
        get_backend("fluid")
    assert "fake" not in str(caught.value)
