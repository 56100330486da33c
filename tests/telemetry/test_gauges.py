"""The standings as gauges, on `/metrics` and over OTLP alike: the budget's spend and each quota's window as
the intercept counts them, and the optimisation verdict of the latest report the control API built — the
report's own figures, not worked out again. One mocked run under a budget and a request quota serves them all."""

import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal

import pytest

from llmproxy.control.client import Client
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.intercept.settings import InterceptPlan
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, running
from llmproxy.telemetry.settings import TelemetryPlan
from tests.telemetry.receiver import Received, receiver, value
from tests.telemetry.test_backends import ask

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
QUESTIONS = ("one?", "one?", "two?")  # the same question twice: a retry, which the report's one-shot rate sees
CHAOS = ChaosFile(
    budgetUsd=Decimal(5),
    rules=(Rule(chaos=ChaosProfile(quotaLimit=10, quotaWindowMillis=3_600_000, quotaName="team")),),
)


@dataclass
class Run:
    metrics: dict[str, float]  # each series of /metrics, by its name and labels as written
    report: dict[str, object]
    received: Received


def series(text: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, number = line.rpartition(" ")
            found[name] = float(number)
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    directory = tmp_path_factory.mktemp("gauges")
    expectations = directory / "expectations.json"
    usage = {"inputTokens": 1000, "outputTokens": 100, "cachedInputTokens": 250}
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "ok", "usage": usage}}]}))
    with receiver() as (url, received):
        telemetry = TelemetryPlan(export=True, endpoint=url, metrics=True)
        plan = replace(mock_plan(expectations, intercept=InterceptPlan(CHAOS)), telemetry=telemetry)
        with running(Session.of(plan), Listening(ca_directory=directory / "ca")) as proxy:
            ask(proxy, QUESTIONS)
            control = Client.from_environment(proxy.environment)
            report = json.loads(control.report("json"))
            origin = proxy.control_url.removesuffix("/llmproxy/chaos")
            with DIRECT.open(origin + "/metrics", timeout=5) as answer:
                text = answer.read().decode()
        yield Run(series(text), report, received)


def gauge(received: Received, name: str, **wanted: str) -> float:
    """The last value the OTLP export sent for gauge `name` whose attributes include `wanted`."""
    with received.lock:
        points = [
            point
            for point in received.metrics.get(name, [])
            if wanted.items() <= {item.key: value(item.value) for item in point.attributes}.items()
        ]
    assert points, f"no {name} {wanted} among {sorted(received.metrics)}"
    return float(points[-1].as_double)


def test_the_budget_stands_as_the_intercept_counts_it(run: Run) -> None:
    spent = float(Decimal(str(run.report["totals"]["estimatedCostUsd"])))  # type: ignore[index]
    assert spent > 0
    assert run.metrics["llmproxy_budget_spent_usd"] == pytest.approx(spent)
    assert run.metrics["llmproxy_budget_limit_usd"] == 5
    assert run.metrics["llmproxy_budget_unpriced"] == 0
    assert gauge(run.received, "llmproxy.budget.spent") == pytest.approx(spent)


def test_each_quota_stands_as_its_window_counts(run: Run) -> None:
    labels = '{llmproxy_quota_name="team",llmproxy_quota_unit="requests"}'
    assert run.metrics[f"llmproxy_quota_used{labels}"] == len(QUESTIONS)
    assert run.metrics[f"llmproxy_quota_limit{labels}"] == 10
    assert 0 < run.metrics[f"llmproxy_quota_reset_seconds{labels}"] <= 3600
    assert gauge(run.received, "llmproxy.quota.used", **{"llmproxy.quota.name": "team"}) == len(QUESTIONS)


def test_the_optimisation_verdict_is_the_latest_reports(run: Run) -> None:
    verdict, totals = run.report["verdict"], run.report["totals"]
    assert isinstance(verdict, dict)
    assert isinstance(totals, dict)
    assert totals["oneShotRate"] < 1  # the question asked twice
    assert run.metrics["llmproxy_optimisation_one_shot_rate"] == totals["oneShotRate"]
    assert run.metrics["llmproxy_optimisation_cache_hit_ratio"] == totals["cacheHitRatio"] == 250 / 1250
    assert run.metrics["llmproxy_optimisation_saving_usd"] == float(verdict["totalEstimatedSavingUsd"])
    assert run.metrics["llmproxy_optimisation_saving_fraction"] == verdict["savingFractionOfSpend"]
    for severity in ("high", "medium", "low"):
        found = run.metrics[f'llmproxy_optimisation_findings{{llmproxy_finding_severity="{severity}"}}']
        assert found == verdict[f"{severity}Count"]
    assert gauge(run.received, "llmproxy.optimisation.one_shot_rate") == totals["oneShotRate"]
