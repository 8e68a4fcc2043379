"""Write the web API's OpenAPI schema, the one ``tests/test_web_openapi.py`` pins.

Regenerate it after changing a route or a request/response model (or a model they include)::

    PYTHONPATH=src python -m fabricplan.web.openapi tests/data/web/openapi.json

>>> schema = openapi_schema()
>>> sorted(p for p in schema["paths"] if p.startswith("/api/c"))
['/api/calibrate', '/api/catalog', '/api/check-bench', '/api/compare', '/api/cost']
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any


def openapi_schema() -> dict[str, Any]:
    """The schema of a default app, as ``/api/openapi.json`` serves it."""
    from fabricplan.web.app import create_app

    return dict(create_app().openapi())


def schema_text() -> str:
    """The schema as stored: sorted keys, two-space indent, a final newline."""
    return json.dumps(openapi_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m fabricplan.web.openapi FILE", file=sys.stderr)
        return 2
    target = Path(argv[0])
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(schema_text())
    os.replace(tmp, target)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
