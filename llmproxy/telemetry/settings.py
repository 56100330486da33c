"""What a run's telemetry does, as a plan says it (`--otel`, `--otlp URL`, `--otel-content`, `--metrics`), and
the checks made before anything starts: an endpoint that is not a URL, or the OpenTelemetry SDK not installed,
is one line at start-up, not a failure on the first call."""

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from llmproxy.errors import UsageError

EXTRA: Final = "llmproxy[otel]"
ENDPOINT_VARIABLES: Final = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
SDK_MODULES: Final = ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")


@dataclass(frozen=True, slots=True)
class TelemetryPlan:
    """`export`: spans and metrics over OTLP/HTTP, to `endpoint` (None: where the `OTEL_EXPORTER_OTLP_*`
    variables say, else the SDK's default, http://localhost:4318). `metrics`: `/metrics` on the control port.
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


def check_environment(environ: Mapping[str, str] = os.environ) -> None:
    """The OTLP endpoint variables that are set, checked as `--otlp` is."""
    for name in ENDPOINT_VARIABLES:
        if value := environ.get(name, "").strip():
            check_endpoint(value, name)


def check_sdk() -> None:
    """The OpenTelemetry SDK and its OTLP exporter installed, else a UsageError naming the extra."""
    for module in SDK_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise UsageError(f"exporting telemetry needs the OpenTelemetry SDK: pip install '{EXTRA}'")
