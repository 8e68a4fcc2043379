"""What one web server accepts: body and file sizes, GPUs per backend, run time.

Every limit is a field of :class:`WebSettings` (one instance per app, frozen); a request beyond one
is refused with HTTP 422 and a line naming the field and the limit (FP11xx, docs/errors.md).

>>> settings = WebSettings()
>>> check_gpus(settings, "flow", 512, "spec")
>>> check_gpus(settings, "packet", 4096, "spec")
Traceback (most recent call last):
...
fabricplan.web.limit.WebRequestError: spec: cluster.gpus: above this server's limit for the packet \
backend (4096); use at most 128 GPUs, or run `fabricplan simulate` on the command line [FP1110]
"""

from __future__ import annotations

from pydantic import Field

from fabricplan.errors import FabricPlanError
from fabricplan.model.base import Frozen


class WebRequestError(FabricPlanError):
    """A web request the server refuses (FP11xx); HTTP 422 unless ``status`` says otherwise."""

    def __init__(
        self,
        code: str,
        where: str,
        what: str,
        value: object = None,
        fix: str = "",
        status: int = 422,
    ) -> None:
        super().__init__(code, where, what, value, fix)
        self.status = status


class WebSettings(Frozen):
    """One server's configuration and limits (``fabricplan serve`` sets the token)."""

    token: str | None = None
    """When set, every request must carry it (header, cookie or ``?token=`` on the page)."""
    allowed_hosts: tuple[str, ...] | None = None
    """Host names a request may address (its ``Host`` header, port aside); ``None`` accepts any.
    ``fabricplan serve`` on loopback without a token allows only loopback names, so that a web
    page elsewhere cannot reach the server through DNS rebinding."""
    max_body_bytes: int = Field(default=16 * 2**20, gt=0)
    """The largest request body (uploads are sent inside it)."""
    max_file_bytes: int = Field(default=8 * 2**20, gt=0)
    """The largest uploaded file (a 512-port SONiC config_db is a few MB)."""
    max_gpus: dict[str, int] = Field(
        default_factory=lambda: {"analytic": 1_048_576, "flow": 16_384, "packet": 128}
    )
    """GPUs per backend: the analytic model answers any size in well under a second; the flow
    level answers thousands of GPUs in seconds; the packet level is for a few hundred hosts."""
    max_all_to_all_gpus: int = Field(default=1024, gt=0)
    """GPUs of a flow-level all_to_all (its flows grow as the square: 1024 GPUs are ~1M flows)."""
    max_packet_size_bytes: int = Field(default=16 * 2**20, gt=0)
    """The largest message of a packet-level job (its run time grows with the bytes sent)."""
    max_sweep_points: int = Field(default=256, gt=0)
    """Points of one sweep job (each is a whole analytic compare)."""
    max_run_s: float = Field(default=600.0, gt=0)
    """The longest a simulation job may run (its ``time_limit_s`` is capped here)."""
    job_workers: int = Field(default=1, ge=1, le=16)
    """Simulation jobs running at once (the others wait in the queue)."""
    jobs_kept: int = Field(default=32, ge=1)
    """Finished jobs kept with their results; the oldest finished one goes first."""


def check_gpus(settings: WebSettings, backend: str, gpus: int, origin: str) -> None:
    """FP1110 when ``gpus`` is above the server's limit for ``backend``."""
    limit = settings.max_gpus.get(backend)
    if limit is not None and gpus > limit:
        raise WebRequestError(
            "FP1110",
            f"{origin}: cluster.gpus",
            f"above this server's limit for the {backend} backend",
            gpus,
            f"use at most {limit} GPUs, or run `fabricplan simulate` on the command line"
            if backend != "analytic"
            else f"use at most {limit} GPUs",
        )


def check_all_to_all(settings: WebSettings, gpus: int, origin: str) -> None:
    """FP1110 when an all_to_all has more GPUs than the server simulates (flows grow as n^2)."""
    if gpus > settings.max_all_to_all_gpus:
        raise WebRequestError(
            "FP1110",
            f"{origin}: cluster.gpus",
            "above this server's limit for simulating all_to_all",
            gpus,
            f"use at most {settings.max_all_to_all_gpus} GPUs for this pattern, or run"
            " `fabricplan simulate` on the command line",
        )


def check_run_time(settings: WebSettings, time_limit_s: float) -> None:
    """FP1111 when a job asks for more run time than the server allows."""
    if time_limit_s > settings.max_run_s:
        raise WebRequestError(
            "FP1111",
            "time_limit_s",
            "above this server's run-time limit",
            time_limit_s,
            f"ask for at most {settings.max_run_s:g} s",
        )


def check_packet_size(settings: WebSettings, size_bytes: int | None) -> None:
    """FP1112 when a packet-level job's message is larger than the server allows."""
    if size_bytes is not None and size_bytes > settings.max_packet_size_bytes:
        raise WebRequestError(
            "FP1112",
            "size_bytes",
            "above this server's limit for the packet backend",
            size_bytes,
            f"use at most {settings.max_packet_size_bytes} bytes, or the flow backend",
        )


def check_file(settings: WebSettings, name: str, text: str) -> None:
    """FP1113 for an uploaded file that is too large, FP1114 for one that is not text."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > settings.max_file_bytes:
        raise WebRequestError(
            "FP1113",
            name,
            "file too large",
            f"{size} B",
            f"upload files of at most {settings.max_file_bytes} B",
            status=413,
        )
    if "\x00" in text:
        raise WebRequestError("FP1114", name, "binary file, not text", None, "upload the text file")
