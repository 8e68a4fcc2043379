"""A backend wrapper that reuses earlier results and reports progress.

Simulated performance (``--backend flow | packet``) can take minutes; an unchanged question
should not. :class:`CachedBackend` keys each result by a SHA-256 of everything it depends on —
the resolved scenario, the design, the request, the backend's name and fabricplan's version —
and keeps it as JSON in the user's cache directory (``$FABRICPLAN_CACHE_DIR``, else
``$XDG_CACHE_HOME/fabricplan/performance``, else ``~/.cache/fabricplan/performance``), never
inside the package. A file is written whole or not at all (a temporary file renamed), so an
interrupted run leaves no partial entry; an unreadable entry is recomputed.

>>> import tempfile
>>> from fabricplan.backends import FakeBackend
>>> from fabricplan.model.results import PerfRequest
>>> from fabricplan.spec import parse_spec
>>> from fabricplan.topology.designer import design_fabric
>>> valid = parse_spec({"cluster": {"gpus": 16}})
>>> design = design_fabric(valid, "roce_v2")
>>> with tempfile.TemporaryDirectory() as cache:
...     cached = CachedBackend(FakeBackend(), Path(cache))
...     first = cached.perform(valid, design, PerfRequest(sizes_bytes=(8,)))
...     again = cached.perform(valid, design, PerfRequest(sizes_bytes=(8,)))
...     (cached.hits, cached.misses, first == again)
(1, 1, True)
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from fabricplan import __version__
from fabricplan.backends import Backend
from fabricplan.model.fabric import FabricDesign
from fabricplan.model.results import PerformanceResult, PerfRequest
from fabricplan.model.scenario import ValidScenario

CACHE_ENV = "FABRICPLAN_CACHE_DIR"
CACHE_SUBDIR = Path("fabricplan") / "performance"

OnRun = Callable[[str, str], None]
"""Called with (technology, "cached" | "running" | "done") around each result."""


def default_cache_dir() -> Path:
    """The user cache directory for performance results (see the module docstring)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / CACHE_SUBDIR


def cache_key(
    valid: ValidScenario, design: FabricDesign, request: PerfRequest, backend: str
) -> str:
    """SHA-256 of everything a performance result depends on."""
    payload = json.dumps(
        {
            "version": __version__,
            "backend": backend,
            "scenario": valid.model_dump(mode="json"),
            "design": design.model_dump(mode="json"),
            "request": request.model_dump(mode="json"),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedBackend:
    """``inner`` with results reused from ``cache_dir`` and ``on_run`` told of each."""

    def __init__(self, inner: Backend, cache_dir: Path, on_run: OnRun | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache_dir = cache_dir
        self.on_run = on_run
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.cache_dir / f"{self.name}-{key}.json"

    def perform(
        self, valid: ValidScenario, design: FabricDesign, request: PerfRequest
    ) -> PerformanceResult:
        path = self._path(cache_key(valid, design, request, self.name))
        if path.is_file():
            try:
                result = PerformanceResult.model_validate_json(path.read_text(encoding="utf-8"))
            except (OSError, ValidationError, ValueError):
                result = None
            if result is not None:
                self.hits += 1
                if self.on_run:
                    self.on_run(design.technology, "cached")
                return result
        self.misses += 1
        if self.on_run:
            self.on_run(design.technology, "running")
        result = self.inner.perform(valid, design, request)
        self._write(path, result.model_dump_json())
        if self.on_run:
            self.on_run(design.technology, "done")
        return result

    def _write(self, path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except OSError:
            return  # a cache that cannot be written only costs the next run its time
