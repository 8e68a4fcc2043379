"""The packet level models the whole shared mechanism vocabulary, whatever was imported first.

A first in-process packet run once refused spectrum_x, ddc and uec with FP538 and passed when
run again. The refusal can only come from ``packet_spec_for``'s comparison of the catalog's
mechanism names with the packet level's own lists; these tests pin that every name of the
vocabulary is modelled (so no catalog technology can be refused) and that the answer for every
catalog technology on every switch it may use is the same in fresh processes that import the
package's modules in different orders (a lazily filled table or an import-order dependence
would show as a difference between them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from fabricplan.sim.mechanism import CongestionControl, LinkFlowControl, RoutingName
from fabricplan.sim.packet.spec import (
    CONGESTION_CONTROL_CODE,
    FLOW_CONTROL_CODE,
    ROUTING_CODE,
    PacketCongestionControl,
    PacketFlowControl,
    PacketRouting,
)

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if name == "fabricplan.sim.kernel_cache":  # imports every module of both levels
        module.compile_notice("packet"), module.compile_notice("flow")
from fabricplan.catalog.loader import load_catalog
from fabricplan.errors import FabricPlanError
from fabricplan.model.hardware import SwitchSpec, TechnologySpec
from fabricplan.sim.packet.spec import packet_spec_for
from fabricplan.spec import switch_eligible
catalog = load_catalog()
answers = {}
for tech in catalog.of_kind(TechnologySpec):
    for switch in catalog.of_kind(SwitchSpec):
        if switch.family != tech.switch_family or switch_eligible(switch, tech) is not None:
            continue
        try:
            spec = packet_spec_for(tech, switch)
            answers[f"{tech.id}/{switch.id}"] = [spec.routing, spec.link_flow_control,
                                                spec.congestion_control, spec.receiver]
        except FabricPlanError as exc:
            answers[f"{tech.id}/{switch.id}"] = exc.code
print(json.dumps(answers, sort_keys=True))
"""

IMPORT_ORDERS = {
    "spec first": ["fabricplan.sim.packet.spec"],
    "run first": ["fabricplan.sim.run"],
    "compile notice first": ["fabricplan.sim.kernel_cache", "fabricplan.cli.simulate_cmd"],
}


def test_every_name_of_the_vocabulary_is_modelled_at_the_packet_level() -> None:
    assert set(get_args(RoutingName)) <= set(get_args(PacketRouting)) == set(ROUTING_CODE)
    assert set(get_args(LinkFlowControl)) <= set(get_args(PacketFlowControl))
    assert set(get_args(PacketFlowControl)) == set(FLOW_CONTROL_CODE)
    assert set(get_args(CongestionControl)) <= set(get_args(PacketCongestionControl))
    assert set(get_args(PacketCongestionControl)) == set(CONGESTION_CONTROL_CODE)


def _answers(first: list[str]) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *first],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers: dict[str, object] = json.loads(done.stdout)
    return answers


@pytest.mark.parametrize("order", sorted(IMPORT_ORDERS))
def test_no_catalog_technology_is_refused_whatever_is_imported_first(order: str) -> None:
    answers = _answers(IMPORT_ORDERS[order])
    for tech in ("spectrum_x", "ddc", "uec"):
        assert any(key.startswith(f"{tech}/") for key in answers), tech
    refused = {key: value for key, value in answers.items() if isinstance(value, str)}
    assert refused == {}
    assert answers == _answers([])  # the same answer as with nothing imported first


def test_the_session_and_its_subprocesses_run_this_checkout(tmp_path: Path) -> None:
    import fabricplan
    from conftest import foreign_package

    assert foreign_package(fabricplan.__file__ or "", ROOT) is None
    assert foreign_package(str(tmp_path / "fabricplan" / "__init__.py"), ROOT) is not None
    # Started elsewhere with the session's environment, a process imports the same package
    # (the session made PYTHONPATH absolute; a relative one would resolve against tmp_path).
    done = subprocess.run(
        [sys.executable, "-c", "import fabricplan; print(fabricplan.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip()).resolve() == Path(fabricplan.__file__ or "").resolve()
