"""The web app: a JSON API under ``/api/`` and the page at ``/``, built by :func:`create_app`.

Each app owns its settings and its job board (``app.state``); two apps in one process share
nothing. In front of the routes, one gate checks the token (when set), caps the body, turns a YAML
spec (``application/yaml``) into the JSON body the routes take and adds the security headers (the
page may load nothing but the app's own files). Every refusal is one JSON line
``{"error": ..., "code": ...}``: a :class:`~fabricplan.errors.FabricPlanError` keeps the CLI's
message (HTTP 422), a malformed body names the field (422), an oversize body is 413.

>>> from fastapi.testclient import TestClient
>>> client = TestClient(create_app())
>>> client.post("/api/design", json={"spec": {"cluster": {"gpus": 1001}}}).json()["error"]
'spec: cluster.gpus: must be a multiple of cluster.gpus_per_node=8 (1001); use 1000 or 1008 [FP101]'
"""

from __future__ import annotations

import hmac
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Any, Literal
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from fabricplan.errors import FabricPlanError
from fabricplan.web import operation
from fabricplan.web.job import JobBoard
from fabricplan.web.limit import WebRequestError, WebSettings
from fabricplan.web.schema import (
    BenchDocument,
    CalibrateRequest,
    CalibrationDocument,
    CatalogDocument,
    CheckBenchRequest,
    CompareRequest,
    ErrorDocument,
    FilesDocument,
    JobDocument,
    JobList,
    LintDocument,
    LintRequest,
    OptionsDocument,
    PerfDocument,
    PerfRequestBody,
    RoceConfigRequest,
    SimulateRequest,
    SpecDocument,
    SpecRequest,
    SweepRequest,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "fabricplan_token"
TOKEN_HEADER = "x-fabricplan-token"
YAML_TYPES = frozenset(("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"))
SPEC_ROUTES = frozenset(
    (
        "/api/spec",
        "/api/design",
        "/api/cost",
        "/api/compare",
        "/api/report",
        "/api/perf",
        "/api/simulate",
        "/api/roce-config",
    )
)
"""Routes whose body may be a YAML spec (it becomes ``{"spec": ...}``, other fields default)."""
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none';"
    " frame-ancestors 'none'; form-action 'self'"
)
ASSETS: dict[str, str] = {"app.js": "text/javascript", "app.css": "text/css"}
"""The page's files, served from the package by name (a request never names a server path)."""
SCHEMA_HINT = "see the schema at /api/openapi.json"
YAML_BODY = {"application/yaml": {"schema": {"type": "string", "description": "the spec's YAML"}}}
ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorDocument, "description": "body or file too large"},
    422: {"model": ErrorDocument, "description": "bad input: one line naming the field, and a fix"},
}


def _error(status: int, line: str, code: str) -> JSONResponse:
    return JSONResponse({"error": line, "code": code}, status_code=status)


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a number (an undefined ratio) becomes null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _document(doc: dict[str, Any], status: int = 200) -> JSONResponse:
    return JSONResponse(_finite(doc), status_code=status)


def _validation_line(exc: RequestValidationError) -> tuple[str, str]:
    """The first problem of a malformed body, as one line naming the field."""
    errors = exc.errors()
    if not errors:
        return f"request: the body is not valid; {SCHEMA_HINT} [FP1101]", "FP1101"
    err = errors[0]
    loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
    where = f"request: {loc}" if loc else "request body"
    kind = err.get("type", "")
    value = err.get("input")
    shown = value if isinstance(value, str | int | float | bool) and len(str(value)) < 80 else None
    if kind == "json_invalid":
        problem = WebRequestError(
            "FP1104", "request body", "is not valid JSON", None, "send a JSON object"
        )
    elif kind == "extra_forbidden":
        problem = WebRequestError("FP1102", where, "unknown key", None, "remove it or check it")
    elif kind == "missing":
        problem = WebRequestError("FP1103", where, "is required", None, "add it to the request")
    else:
        message = str(err.get("msg", "is not valid")).lower()
        problem = WebRequestError("FP1101", where, message, shown, SCHEMA_HINT)
    return problem.message, problem.code


class RequestGate:
    """Token, body cap, YAML specs and security headers, in front of every route."""

    def __init__(self, app: ASGIApp, settings: WebSettings) -> None:
        self.app = app
        self.settings = settings

    def _host_allowed(self, host: str) -> bool:
        allowed = self.settings.allowed_hosts
        if allowed is None:
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]").lower() in allowed

    def _authorised(self, scope: Scope, headers: dict[str, str]) -> bool:
        token = self.settings.token
        if token is None:
            return True
        given: list[str] = []
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given.append(auth[7:].strip())
        given.append(headers.get(TOKEN_HEADER, ""))
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == TOKEN_COOKIE:
                given.append(value)
        if scope.get("path") == "/":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given.extend(query.get("token", []))
        expected = token.encode()
        return any(hmac.compare_digest(g.encode(), expected) for g in given if g)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        send = self._with_headers(send, str(scope.get("path", "")))
        if not self._host_allowed(headers.get("host", "")):
            line = (
                "request: Host header names another server; open the page by the address the"
                " server listens on [FP1123]"
            )
            await _error(421, line, "FP1123")(scope, receive, send)
            return
        if not self._authorised(scope, headers):
            line = (
                "request: missing or wrong token; send it as 'Authorization: Bearer TOKEN' or"
                " open the page as /?token=TOKEN [FP1106]"
            )
            await _error(401, line, "FP1106")(scope, receive, send)
            return
        cap = self.settings.max_body_bytes
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            await self._too_large(scope, receive, send, int(declared))
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                await self._too_large(scope, receive, send, size)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type in YAML_TYPES and scope.get("path") in SPEC_ROUTES:
            converted = self._yaml_body(body)
            if isinstance(converted, JSONResponse):
                await converted(scope, receive, send)
                return
            body = converted
            scope = dict(scope)
            dropped = (b"content-type", b"content-length")
            kept = [(k, v) for k, v in scope["headers"] if k.lower() not in dropped]
            scope["headers"] = [
                *kept,
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ]

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, size: int) -> None:
        problem = WebRequestError(
            "FP1105",
            "request body",
            "too large",
            f"{size} B",
            f"send at most {self.settings.max_body_bytes} B",
        )
        await _error(413, problem.message, problem.code)(scope, receive, send)

    @staticmethod
    def _yaml_body(body: bytes) -> bytes | JSONResponse:
        from fabricplan.spec import read_spec, spec_mapping

        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            problem = WebRequestError(
                "FP1107", "spec", "not UTF-8 text", f"byte {exc.start}", "send the spec as UTF-8"
            )
            return _error(422, problem.message, problem.code)
        try:
            data = spec_mapping(text, operation.SPEC_ORIGIN)
            if not isinstance(data, dict):
                read_spec(data, operation.SPEC_ORIGIN)  # FP107: a spec is a mapping
        except FabricPlanError as exc:
            return _error(422, str(exc), exc.code)
        return json.dumps({"spec": data}, default=str).encode()

    @staticmethod
    def _with_headers(send: Send, path: str) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [
                    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                if path.startswith("/api/"):
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        return wrapped


def _asset(name: str) -> str:
    return files("fabricplan.web").joinpath("static", name).read_text(encoding="utf-8")


def create_app(settings: WebSettings | None = None) -> FastAPI:
    """A new app with its own settings and job board.

    Parameters
    ----------
    settings
        Token and limits (default: :class:`WebSettings`'s defaults, no token).
    """
    settings = settings or WebSettings()
    board = JobBoard(settings.job_workers, settings.jobs_kept)
    page = _asset("index.html")
    assets = {name: _asset(name) for name in ASSETS}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        board.close()

    app = FastAPI(
        title="fabricplan",
        summary="Design, price, model and compare InfiniBand and RoCE fabrics for GPU clusters.",
        version=_version(),
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.jobs = board

    @app.exception_handler(FabricPlanError)
    async def _fabricplan_error(_: Request, exc: FabricPlanError) -> JSONResponse:
        status = exc.status if isinstance(exc, WebRequestError) else 422
        return _error(status, str(exc), exc.code)

    @app.exception_handler(RequestValidationError)
    async def _bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        line, code = _validation_line(exc)
        return _error(422, line, code)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        what = {404: "no such route", 405: "method not allowed"}.get(exc.status_code, exc.detail)
        line = f"{request.method} {request.url.path}: {what}; see /api/openapi.json [FP1108]"
        return _error(exc.status_code, line, "FP1108")

    @app.exception_handler(Exception)
    async def _crash(_: Request, exc: Exception) -> JSONResponse:
        line = f"internal error: {type(exc).__name__}; please report it with the request [FP1199]"
        return _error(500, line, "FP1199")

    _routes(app, settings, board)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        response = HTMLResponse(page)
        token = request.query_params.get("token")
        if settings.token is not None and token is not None:
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in assets:
            return _error(404, f"/static/{name}: no such file [FP1108]", "FP1108")
        return Response(assets[name], media_type=ASSETS[name])

    app.add_middleware(RequestGate, settings=settings)
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fabricplan")
    except PackageNotFoundError:
        return "0"


def _routes(app: FastAPI, settings: WebSettings, board: JobBoard) -> None:
    spec_body = {"requestBody": {"content": YAML_BODY}}

    def documented(model: type[Any]) -> dict[int | str, dict[str, Any]]:
        return {200: {"model": model}, **ERRORS}

    @app.get("/api/catalog", response_model=None, responses=documented(CatalogDocument))
    def catalog() -> JSONResponse:
        """The hardware catalog (``catalog list --format json``) and the default price book."""
        from fabricplan.catalog.listing import list_records
        from fabricplan.catalog.loader import load_catalog

        known = load_catalog()
        prices = [entry.model_dump(mode="json") for entry in known.prices.values()]
        return _document({"items": list_records(known), "prices": prices})

    @app.post(
        "/api/spec",
        response_model=None,
        responses=documented(SpecDocument),
        openapi_extra=spec_body,
    )
    def spec(body: SpecRequest) -> JSONResponse:
        """Check a spec; answer it as JSON and YAML, and with every default filled in."""
        return _document(operation.spec_document(body, settings))

    @app.post(
        "/api/design",
        response_model=None,
        responses=documented(OptionsDocument),
        openapi_extra=spec_body,
    )
    def design(body: SpecRequest) -> JSONResponse:
        """``design``: every technology's fabric (tiers, switches, links, cables, limits)."""
        return _document(operation.options(body, ("design",), settings, decide=False))

    @app.post(
        "/api/cost",
        response_model=None,
        responses=documented(OptionsDocument),
        openapi_extra=spec_body,
    )
    def cost(body: SpecRequest) -> JSONResponse:
        """``cost``: every technology's fabric, priced (capex, power, opex, TCO)."""
        return _document(operation.options(body, ("design", "cost"), settings, decide=False))

    @app.post(
        "/api/compare",
        response_model=None,
        responses=documented(OptionsDocument),
        openapi_extra=spec_body,
    )
    def compare(body: CompareRequest) -> JSONResponse:
        """``compare``: design, price, model and decide, with reasons and flip points."""
        return _document(operation.options(body, operation.COMPARE_PARTS, settings, decide=True))

    @app.post(
        "/api/report",
        response_model=None,
        responses={200: {"content": {"text/html": {}, "text/markdown": {}}}, **ERRORS},
        openapi_extra=spec_body,
    )
    def report(
        body: CompareRequest, format: Literal["html", "md", "markdown"] = "html"
    ) -> Response:
        """The ``compare`` report as a self-contained HTML page or as Markdown (``md``)."""
        text = operation.compare_report(body, settings, "md" if format == "markdown" else format)
        media = "text/html" if format == "html" else "text/markdown"
        return PlainTextResponse(text, media_type=media)

    @app.post(
        "/api/perf",
        response_model=None,
        responses=documented(PerfDocument),
        openapi_extra=spec_body,
    )
    def perf(body: PerfRequestBody) -> JSONResponse:
        """``perf``: predicted nccl-tests (or perftest) points per technology."""
        return _document(operation.perf(body, settings))

    @app.post(
        "/api/roce-config",
        response_model=None,
        responses=documented(FilesDocument),
        openapi_extra=spec_body,
    )
    def roce_config(body: RoceConfigRequest) -> JSONResponse:
        """``roce-config``: the baseline lossless configuration files, by name."""
        return _document(operation.roce_config(body, settings))

    @app.post("/api/lint", response_model=None, responses=documented(LintDocument))
    def lint(body: LintRequest) -> JSONResponse:
        """``lint``: lossless-RoCE findings with fixes over uploaded configuration files."""
        return _document(operation.lint(body, settings))

    @app.post("/api/check-bench", response_model=None, responses=documented(BenchDocument))
    def check_bench(body: CheckBenchRequest) -> JSONResponse:
        """``check-bench``: uploaded nccl-tests/perftest logs, against the model with a spec."""
        return _document(operation.check_bench(body, settings))

    @app.post("/api/calibrate", response_model=None, responses=documented(CalibrationDocument))
    def calibrate(body: CalibrateRequest) -> JSONResponse:
        """``calibrate``: the model's free parameters fitted to uploaded logs."""
        return _document(operation.calibrate(body, settings))

    @app.post(
        "/api/simulate",
        status_code=202,
        response_model=None,
        responses={202: {"model": JobDocument}, **ERRORS},
        openapi_extra=spec_body,
    )
    def simulate(body: SimulateRequest) -> JSONResponse:
        """Start a flow (or packet) simulation job; poll ``/api/jobs/{id}`` for its progress."""
        label, work = operation.simulation_work(body, settings)
        job_id = board.submit("simulate", label, work, body.time_limit_s)
        found = board.view(job_id)
        assert found is not None  # just submitted; only this board removes jobs
        return _document(found.model_dump(mode="json"), status=202)

    @app.post(
        "/api/sweep",
        status_code=202,
        response_model=None,
        responses={202: {"model": JobDocument}, **ERRORS},
    )
    def sweep(body: SweepRequest) -> JSONResponse:
        """Start a sweep job (analytic); its result holds the rows ``fabricplan sweep`` writes."""
        label, work = operation.sweep_work(body, settings)
        job_id = board.submit("sweep", label, work, settings.max_run_s)
        found = board.view(job_id)
        assert found is not None  # just submitted; only this board removes jobs
        return _document(found.model_dump(mode="json"), status=202)

    @app.get("/api/jobs", response_model=None, responses={200: {"model": JobList}})
    def jobs() -> JSONResponse:
        """Every job this server keeps, newest first (without results)."""
        return _document({"jobs": [j.model_dump(mode="json") for j in board.list()]})

    @app.get(
        "/api/jobs/{job_id}",
        response_model=None,
        responses={200: {"model": JobDocument}, 404: {"model": ErrorDocument}},
    )
    def job(job_id: str) -> JSONResponse:
        """One job: status, progress and, once done, the ``simulate --format json`` result."""
        found = board.view(job_id)
        if found is None:
            return _no_job(job_id)
        return _document(found.model_dump(mode="json"))

    @app.post(
        "/api/jobs/{job_id}/cancel",
        response_model=None,
        responses={200: {"model": JobDocument}, 404: {"model": ErrorDocument}},
    )
    def cancel(job_id: str) -> JSONResponse:
        """Ask a job to stop (a queued one never starts)."""
        found = board.cancel(job_id)
        if found is None:
            return _no_job(job_id)
        return _document(found.model_dump(mode="json"))


def _no_job(job_id: str) -> JSONResponse:
    shown = job_id if len(job_id) <= 40 else job_id[:40] + "..."
    problem = WebRequestError(
        "FP1109", "job", "no such job on this server", shown, "list them at /api/jobs"
    )
    return _error(404, problem.message, problem.code)
