"""Where each signal goes, as `--otlp` and the specification's `OTEL_EXPORTER_OTLP_*` variables say, and what
llmproxy cannot follow said in one line at start-up."""

import pytest

from llmproxy.errors import UsageError
from llmproxy.telemetry.settings import Destination, check_environment, destination, metric_interval, resource


def test_a_base_url_gets_each_signals_path() -> None:
    assert destination("traces", "http://collector:4318/") == Destination("http://collector:4318/v1/traces")
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example.com/otlp"}
    assert destination("metrics", None, environ).url == "https://otlp.example.com/otlp/v1/metrics"
    assert destination("traces", None, {}).url == "http://localhost:4318/v1/traces"


def test_a_signals_own_variables_come_first_and_its_endpoint_is_taken_as_it_is() -> None:
    environ = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:9999/custom",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20abc,x-team=ai",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-only=traces",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        "OTEL_EXPORTER_OTLP_CERTIFICATE": "/etc/ca.pem",
    }
    traces = destination("traces", None, environ)
    assert traces == Destination(
        "http://traces:9999/custom", (("x-only", "traces"),), 2.5, True, "/etc/ca.pem", None, None
    )
    metrics = destination("metrics", None, environ)
    assert metrics.url == "http://base:4318/v1/metrics"
    assert metrics.headers == (("authorization", "Bearer abc"), ("x-team", "ai"))


def test_the_resource_and_the_metric_interval() -> None:
    environ = {"OTEL_RESOURCE_ATTRIBUTES": "service.name=fleet,deployment.environment=ci%20runs"}
    assert resource(environ) == {"service.name": "fleet", "deployment.environment": "ci runs"}
    assert resource({**environ, "OTEL_SERVICE_NAME": "proxy-1"})["service.name"] == "proxy-1"
    assert resource({}) == {"service.name": "llmproxy"}
    assert metric_interval({"OTEL_METRIC_EXPORT_INTERVAL": "5000"}) == 5.0
    assert metric_interval({}) == 60.0


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc': llmproxy exports OTLP over"),
        ({"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL is 'http/json'"),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "ten"}, "OTEL_EXPORTER_OTLP_TIMEOUT must be a number of milliseconds"),
        ({"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION is 'zstd': it may be gzip"),
        ({"OTEL_EXPORTER_OTLP_HEADERS": "api-key"}, "OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs"),
        ({"OTEL_RESOURCE_ATTRIBUTES": "=x"}, "OTEL_RESOURCE_ATTRIBUTES must be key=value pairs"),
        ({"OTEL_METRIC_EXPORT_INTERVAL": "0"}, "OTEL_METRIC_EXPORT_INTERVAL must be a number of milliseconds"),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT 'collector"),
    ],
)
def test_what_cannot_be_followed_is_one_line(environ: dict[str, str], said: str) -> None:
    with pytest.raises(UsageError) as raised:
        check_environment(None, environ)
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)
