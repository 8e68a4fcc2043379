"""``fabricplan serve``: the web app (JSON API and page) on this machine.

Loopback by default; any other address needs a token (``--token`` or ``FABRICPLAN_TOKEN``), which
every request must then carry.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from fabricplan.cli.guard import fail, guarded

TOKEN_ENV = "FABRICPLAN_TOKEN"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16
"""A shorter token is guessable: refuse it."""


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only (``localhost``, 127.0.0.0/8, ``::1``).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@guarded
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help=f"Required from every request; needed off loopback (or set {TOKEN_ENV}).",
            envvar=TOKEN_ENV,
        ),
    ] = None,
) -> None:
    """Serve the web app: the page at http://HOST:PORT/ and the JSON API under /api/."""
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise fail(f"--token: shorter than {MIN_TOKEN_CHARS} characters; use a longer one [FP1121]")
    if not is_loopback(host) and token is None:
        raise fail(
            f"--host: {host} is reachable from other machines; pass --token (or set {TOKEN_ENV})"
            " to require it from every request [FP1122]"
        )
    import uvicorn

    from fabricplan.web.app import create_app
    from fabricplan.web.limit import WebSettings

    url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
    typer.echo(f"fabricplan web app on {url}" + ("?token=..." if token else ""), err=True)
    # Without a token only loopback names are served: no DNS-rebinding page elsewhere gets in.
    allowed = LOOPBACK_NAMES if token is None else None
    settings = WebSettings(token=token, allowed_hosts=allowed)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
