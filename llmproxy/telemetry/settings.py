"""What a run's telemetry does, as a plan says it (`--otel`, `--otlp URL`, `--otel-content`, `--metrics`), where
each signal goes as the standard `OTEL_EXPORTER_OTLP_*` variables say (`destination`), and the checks made
before anything starts: an endpoint that is not a URL, or a variable llmproxy cannot follow, is one line at
start-up, not a failure on the first call."""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from llmproxy.errors import UsageError

DEFAULT_ENDPOINT: Final = "http://localhost:4318"
DEFAULT_TIMEOUT: Final = 10.0  # seconds, the specification's default (10,000 ms)
DEFAULT_INTERVAL: Final = 60.0  # seconds between metric exports (OTEL_METRIC_EXPORT_INTERVAL: 60,000 ms)
SIGNALS: Final = ("traces", "metrics")
PROTOCOL: Final = "http/protobuf"  # the only one llmproxy sends
type Signal = Literal["traces", "metrics"]


@dataclass(frozen=True, slots=True)
class Destination:
    """Where one signal goes and how (the OTLP exporter's configuration): `url` in full, `headers` on each
    request, `timeout` seconds, `gzip`, and the TLS files: a CA to trust, a client certificate and key."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    gzip: bool = False
    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None


@dataclass(frozen=True, slots=True)
class TelemetryPlan:
    """`export`: spans and metrics over OTLP/HTTP, to `endpoint` (None: where the `OTEL_EXPORTER_OTLP_*`
    variables say, else http://localhost:4318). `metrics`: `/metrics` on the control port.
    `content`: the messages on the spans, redacted. `run`: the run's own attributes (session, cassette)."""

    export: bool = False
    endpoint: str | None = None
    metrics: bool = False
    content: bool = False
    run: tuple[tuple[str, str], ...] = ()

    @property
    def active(self) -> bool:
        return self.export or self.metrics

    def describe(self) -> str:
        """What it does, for `--explain-chain`."""
        what = []
        if self.export:
            where = self.endpoint or "the OTEL_EXPORTER_OTLP_* endpoint"
            what.append(f"spans and metrics over OTLP to {where}" + (", with the messages" if self.content else ""))
        if self.metrics:
            what.append("/metrics on the control port")
        return " and ".join(what)


def check_endpoint(url: str, where: str) -> str:
    """`url` if it is an http(s) URL with a host; else a UsageError naming `where` it came from."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — raises ValueError for a port that is not a number
    except ValueError as error:
        raise UsageError(f"{where} {url!r} is not a URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{where} {url!r} is not an http:// or https:// URL with a host")
    return url


def check_environment(endpoint: str | None = None, environ: Mapping[str, str] = os.environ) -> None:
    """`endpoint` (`--otlp`) and the `OTEL_*` variables the export follows, checked: a UsageError for the
    first it cannot follow."""
    for signal in SIGNALS:
        destination(signal, endpoint, environ)
    resource(environ)
    metric_interval(environ)


def _variable(environ: Mapping[str, str], signal: Signal, what: str) -> tuple[str, str] | None:
    """The per-signal variable `OTEL_EXPORTER_OTLP_{SIGNAL}_{what}` if set, else the general one, as (name, value)."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_{what}", f"OTEL_EXPORTER_OTLP_{what}"):
        if value := environ.get(name, "").strip():
            return name, value
    return None


def destination(signal: Signal, endpoint: str | None, environ: Mapping[str, str] = os.environ) -> Destination:
    """Where `signal` goes: `endpoint` (`--otlp`, a base URL) + `/v1/{signal}`; else the per-signal endpoint
    variable as it is; else `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL) + `/v1/{signal}`; else localhost:4318.
    Raises UsageError for a value that is not what the specification says it is."""
    if endpoint is not None:
        url = _under(check_endpoint(endpoint, "--otlp"), signal)
    elif value := environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip():
        url = check_endpoint(value, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    elif value := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        url = _under(check_endpoint(value, "OTEL_EXPORTER_OTLP_ENDPOINT"), signal)
    else:
        url = _under(DEFAULT_ENDPOINT, signal)
    if (found := _variable(environ, signal, "PROTOCOL")) is not None and found[1] != PROTOCOL:
        raise UsageError(f"{found[0]} is {found[1]!r}: llmproxy exports OTLP over {PROTOCOL} only")
    headers = pairs(*found) if (found := _variable(environ, signal, "HEADERS")) is not None else ()
    timeout = DEFAULT_TIMEOUT
    if (found := _variable(environ, signal, "TIMEOUT")) is not None:
        timeout = _milliseconds(*found) / 1000
    gzip = False
    if (found := _variable(environ, signal, "COMPRESSION")) is not None:
        if found[1] not in ("gzip", "none"):
            raise UsageError(f"{found[0]} is {found[1]!r}: it may be gzip or none")
        gzip = found[1] == "gzip"
    files = {
        what: found[1]
        for what in ("CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY")
        if (found := _variable(environ, signal, what)) is not None
    }
    return Destination(
        url,
        headers,
        timeout,
        gzip,
        files.get("CERTIFICATE"),
        files.get("CLIENT_CERTIFICATE"),
        files.get("CLIENT_KEY"),
    )


def resource(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The resource's attributes: `OTEL_RESOURCE_ATTRIBUTES`, `service.name` from `OTEL_SERVICE_NAME` when set,
    else from those, else `llmproxy`."""
    found = dict(pairs("OTEL_RESOURCE_ATTRIBUTES", value)) if (value := environ.get("OTEL_RESOURCE_ATTRIBUTES")) else {}
    if service := environ.get("OTEL_SERVICE_NAME", "").strip():
        found["service.name"] = service
    found.setdefault("service.name", "llmproxy")
    return found


def metrics_exported(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the metrics go over OTLP too: not when `OTEL_METRICS_EXPORTER` is `none` (a backend that takes
    spans only, such as Arize Phoenix)."""
    return environ.get("OTEL_METRICS_EXPORTER", "").strip().lower() != "none"


def metric_interval(environ: Mapping[str, str] = os.environ) -> float:
    """Seconds between metric exports: `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds), else a minute."""
    value = environ.get("OTEL_METRIC_EXPORT_INTERVAL", "").strip()
    return _milliseconds("OTEL_METRIC_EXPORT_INTERVAL", value) / 1000 if value else DEFAULT_INTERVAL


def pairs(name: str, value: str) -> tuple[tuple[str, str], ...]:
    """`key=value,key=value` with URL-encoded values (the W3C Baggage form the specification gives the
    headers and resource variables)."""
    found = []
    for item in value.split(","):
        if not item.strip():
            continue
        key, equals, given = item.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"{name} must be key=value pairs separated by commas, got {item.strip()!r}")
        found.append((unquote(key.strip()), unquote(given.strip())))
    return tuple(found)


def _milliseconds(name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number > 0:
        raise UsageError(f"{name} must be a number of milliseconds above 0, got {value!r}")
    return number


def _under(base: str, signal: Signal) -> str:
    """A base URL's path for `signal`, as `OTEL_EXPORTER_OTLP_ENDPOINT` is read: `/v1/traces` under it."""
    return base.rstrip("/") + f"/v1/{signal}"
