"""The API's OpenAPI schema is pinned, and no request generated from it gets a 500.

The pinned file changes only on purpose; after changing a route or a model a route uses, regenerate
it with ``PYTHONPATH=src python -m fabricplan.web.openapi tests/data/web/openapi.json`` and read
the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402

from fabricplan.web.app import create_app  # noqa: E402
from fabricplan.web.limit import WebSettings  # noqa: E402
from fabricplan.web.openapi import schema_text  # noqa: E402

PINNED = Path(__file__).parent / "data" / "web" / "openapi.json"
REGENERATE = "PYTHONPATH=src python -m fabricplan.web.openapi tests/data/web/openapi.json"
MAX_EXAMPLES = 3
"""Generated requests per operation: enough to reach the bad-input paths, a few seconds in all."""


def test_the_schema_is_the_pinned_one() -> None:
    assert schema_text() == PINNED.read_text(), f"the API changed: regenerate with `{REGENERATE}`"


def test_the_schema_lists_every_operation_and_both_spec_bodies() -> None:
    schema = json.loads(PINNED.read_text())
    routes = {(path, method) for path, item in schema["paths"].items() for method in item}
    assert {
        ("/api/catalog", "get"),
        ("/api/design", "post"),
        ("/api/cost", "post"),
        ("/api/compare", "post"),
        ("/api/perf", "post"),
        ("/api/simulate", "post"),
        ("/api/roce-config", "post"),
        ("/api/lint", "post"),
        ("/api/check-bench", "post"),
        ("/api/calibrate", "post"),
        ("/api/jobs/{job_id}", "get"),
        ("/api/jobs/{job_id}/cancel", "post"),
    } <= routes
    body = schema["paths"]["/api/compare"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/json", "application/yaml"}


# Small limits: a generated simulation is a tiny job, finished or cancelled when the app closes.
APP = create_app(
    WebSettings(
        max_gpus={"analytic": 1_048_576, "flow": 64, "packet": 16},
        max_run_s=5.0,
        max_body_bytes=2**20,
        jobs_kept=4,
    )
)
SCHEMA = schemathesis.openapi.from_asgi("/api/openapi.json", APP)


@SCHEMA.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_is_a_server_error(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error])
