"""The ``--vary`` parser: ranges, lists, YAML points files; properties with hypothesis."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricplan.errors import SweepError
from fabricplan.sweep.vary import MAX_VALUES, parse_vary, read_points_file

PATHS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}(\.[a-z_][a-z0-9_]{0,8}){0,3}", fullmatch=True)


def test_ranges() -> None:
    assert parse_vary("cluster.gpus=512..65536x2").values() == [2**k for k in range(9, 17)]
    assert parse_vary("a.b=1..10x3").values() == [1, 3, 9]
    assert parse_vary("a.b=1..3").values() == [1, 2, 3]
    assert parse_vary("a.b=0..1+0.25").values() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert parse_vary("a.b=0.1..0.3+0.1").values() == pytest.approx([0.1, 0.2, 0.3])
    assert parse_vary("a.b=5..5").values() == [5]


def test_lists_take_yaml_values() -> None:
    assert parse_vary("fabric.lossless.pfc=true,false").values() == [True, False]
    assert parse_vary("fabric.tiers=auto,2,3").values() == ["auto", 2, 3]
    assert parse_vary("fabric.oversubscription=1, 1.5 ,2").values() == [1, 1.5, 2]
    assert parse_vary("a.b=1e-5,010").values() == [1e-5, 10]
    assert parse_vary("fabric.switch.roce_v2=sn5600,'a,b'").values() == ["sn5600", "a,b"]
    assert parse_vary("fabric.switch.roce_v2={ports: 64, port_speed_gbps: 800},auto").values() == [
        {"ports": 64, "port_speed_gbps": 800},
        "auto",
    ]
    assert parse_vary("priorities=balanced").values() == ["balanced"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("cluster.gpus", "FP1001"),
        ("=1,2", "FP1002"),
        ("cluster..gpus=1", "FP1002"),
        ("cluster gpus=1", "FP1002"),
        ("cluster.gpus=", "FP1003"),
        ("cluster.gpus=1,,2", "FP1003"),
        ("cluster.gpus=[1,2", "FP1003"),
        ("cluster.gpus=10..1", "FP1004"),
        ("cluster.gpus=1..10x1", "FP1004"),
        ("cluster.gpus=0..10x2", "FP1004"),
        ("cluster.gpus=1..10+0", "FP1004"),
        ("cluster.gpus=1..1e9", "FP1005"),
        ("cluster.gpus=1,2,1", "FP1006"),
    ],
)
def test_bad_input_is_one_coded_line(text: str, code: str) -> None:
    with pytest.raises(SweepError) as info:
        parse_vary(text)
    assert info.value.code == code
    message = str(info.value)
    assert "\n" not in message and message.startswith("--vary ") and message.endswith(f"[{code}]")


def test_points_file(tmp_path: Path) -> None:
    file = tmp_path / "points.yaml"
    file.write_text(
        yaml.safe_dump(
            {
                "points": [
                    {"cluster.gpus": 1024, "fabric.switch.roce_v2": "sn5600"},
                    {"cluster.gpus": 4096},
                ]
            }
        )
    )
    dimension = parse_vary(str(file))
    assert dimension.keys == ("cluster.gpus", "fabric.switch.roce_v2")
    assert dimension.points == (
        {"cluster.gpus": 1024, "fabric.switch.roce_v2": "sn5600"},
        {"cluster.gpus": 4096},
    )
    for text, code in (
        ("- 3\n", "FP1007"),
        ("{a: [\n", "FP1007"),
        ("[]\n", "FP1007"),
        ("- {a b: 1}\n", "FP1002"),
    ):
        file.write_text(text)
        with pytest.raises(SweepError) as info:
            read_points_file(file)
        assert info.value.code == code
    with pytest.raises(SweepError, match="cannot read"):
        parse_vary(str(tmp_path / "missing.yaml"))


@given(
    PATHS,
    st.integers(min_value=1, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=2, max_value=10),
)
def test_geometric_ranges_are_the_powers_up_to_high(
    path: str, low: int, span: int, factor: int
) -> None:
    high = low + span
    values = parse_vary(f"{path}={low}..{high}x{factor}").values()
    assert values[0] == low and values[-1] <= high < values[-1] * factor
    assert all(b == a * factor for a, b in itertools.pairwise(values))
    assert all(isinstance(v, int) for v in values)


@given(
    PATHS,
    st.integers(min_value=-1000, max_value=1000),
    st.integers(min_value=0, max_value=5000),
    st.integers(min_value=1, max_value=100),
)
def test_arithmetic_ranges_step_evenly(path: str, low: int, span: int, step: int) -> None:
    values = parse_vary(f"{path}={low}..{low + span}+{step}").values()
    assert values == list(range(low, low + span + 1, step))


@given(
    PATHS,
    st.lists(
        st.one_of(
            st.integers(min_value=-(10**9), max_value=10**9),
            st.booleans(),
            st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True).filter(
                lambda s: s not in {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}
            ),
            st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6).filter(
                lambda f: not f.is_integer()
            ),
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda v: (type(v), v),
    ).filter(lambda values: len({repr(v) for v in values}) == len(values)),
)
@settings(max_examples=200)
def test_a_list_round_trips_its_values(path: str, values: list[object]) -> None:
    text = ",".join(
        str(v).lower() if isinstance(v, bool) else repr(v) if isinstance(v, float) else str(v)
        for v in values
    )
    dimension = parse_vary(f"{path}={text}")
    assert dimension.keys == (path,)
    parsed = dimension.values()
    assert len(parsed) == len(values)
    for got, want in zip(parsed, values, strict=True):
        if isinstance(want, float):
            assert isinstance(got, float) and math.isclose(got, want)
        else:
            assert got == want and type(got) is type(want)


@given(st.text(max_size=40))
@settings(max_examples=300)
def test_any_text_parses_or_fails_with_a_coded_line(text: str) -> None:
    try:
        dimension = parse_vary(text)
    except SweepError as exc:
        assert exc.code.startswith("FP10") and str(exc).endswith(f"[{exc.code}]")
        return
    assert len(dimension.points) <= MAX_VALUES
    assert all(set(p) <= set(dimension.keys) for p in dimension.points)
