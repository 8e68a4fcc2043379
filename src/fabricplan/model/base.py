"""The base of every model: frozen, and strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that rejects unknown keys (typos fail with their name)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
