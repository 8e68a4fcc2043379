"""Each new technology, on its own designed fabric, through the three levels: designed, run by
the analytic, flow and packet backends, and the levels agree where each is valid.

Two nodes of 8 x 400G H100 (16 NICs): the DDC designer gives eight Jericho3-AI rail leaves
sprayed over Ramon3 fabric elements (so cross-rail traffic crosses the elements, the grant
round trip and the cells), the Spectrum-4 designs one leaf; a 16 MiB all_to_all sends half of
each GPU's bytes off the node. The tolerances are those of
tests/test_levels_agree.py: flow and packet within 5 % where the physics is the same, the
analytic closed form within 10 % of them.
"""

from __future__ import annotations

import pytest

from fabricplan.backends import get_backend
from fabricplan.model.results import PerfRequest
from fabricplan.model.scenario import TechnologyName
from fabricplan.spec import parse_spec
from fabricplan.topology.designer import design_fabric
from fabricplan.units import gbps_to_bytes_per_us

SAME_PHYSICS = 0.05
ANALYTIC_VS_SIMULATED = 0.10


@pytest.mark.parametrize("tech", ["spectrum_x", "ddc", "uec"])
def test_the_three_levels_run_each_new_technology_on_its_own_design(
    tech: TechnologyName,
) -> None:
    valid = parse_spec({"cluster": {"gpus": 16}, "fabric": {"technologies": [tech]}})
    design = design_fabric(valid, tech)
    assert design.tiers == (2 if tech == "ddc" else 1)
    request = PerfRequest(collectives=("all_to_all",), sizes_bytes=(2**24,), p2p=False, step=False)
    times = {
        name: get_backend(name).perform(valid, design, request).collectives[0].time_us
        for name in ("analytic", "flow", "packet")
    }
    assert times["flow"] == pytest.approx(times["packet"], rel=SAME_PHYSICS)
    assert times["analytic"] == pytest.approx(times["flow"], rel=ANALYTIC_VS_SIMULATED)
    # 8 of every GPU's 16 destinations are off its node, through its own NIC.
    nic_bytes_per_us = gbps_to_bytes_per_us(valid.spec.cluster.nic_speed_gbps)
    assert times["flow"] >= 2**24 * 8 / 16 / nic_bytes_per_us
