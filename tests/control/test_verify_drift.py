"""Drift over the control API: a running mock re-sends a cassette's requests to the "provider" (a loopback
server standing in for it) and compares the answers' shapes, as `llmproxy verify drift --live` does — the same
gate, so a changed shape fails and an answer it cannot compare is could-not-check, never a pass. It spends the
user's keys: the read-only token cannot ask for it."""

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from llmproxy.control.client import Client, ControlError
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE
from llmproxy.session import Session
from tests.analysis.reports import ROOT
from tests.analysis.test_verify import CLEAN, JSON, _to, crafted
from tests.conformance.server import LoopbackServer, Reply
from tests.mock.sdk_clients import serving


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, {"expectations": []})


def test_a_changed_shape_fails_and_a_failed_resend_cannot_pass(
    proxy: Session, tmp_path: Path, loopback: LoopbackServer
) -> None:
    control = Client.from_environment(proxy.environment)
    cassette = crafted(tmp_path, "local.json", _to(loopback.port))
    recorded = orjson.loads((ROOT / CLEAN).read_bytes())["exchanges"][0]["response"]["body"]["json"]

    loopback.answer = Reply(200, JSON, orjson.dumps(recorded))
    same = control.verify_drift(cassette)
    assert (same.ok, same.outcome, same.details["checked"]) == (True, "pass", 3)

    loopback.answer = Reply(200, JSON, orjson.dumps({**recorded, "service_tier": "standard"}))
    changed = control.verify_drift(cassette)
    assert (changed.ok, changed.outcome) == (False, "fail")
    assert changed.reasons == [f"exchange {n}: added $.service_tier" for n in (1, 2, 3)]

    loopback.answer = Reply(500, JSON, b'{"error": "down"}')
    down = control.verify_drift(cassette)
    assert (down.ok, down.outcome) == (False, "could_not_check")
    assert "the live answer was status 500" in down.reasons[0]


def test_it_must_be_asked_for_live_by_the_full_token_for_a_cassette_that_reads(proxy: Session, tmp_path: Path) -> None:
    control = Client.from_environment(proxy.environment)
    with pytest.raises(ControlError) as missing:
        control.verify_drift(tmp_path / "absent.json")
    assert missing.value.status == 400
    assert "absent.json" in str(missing.value)

    status, said = _post(proxy, {"cassette": CLEAN})  # no "live": true
    assert status == 400
    assert "$.live" in said
    reader = Client(proxy.control_api_url, proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE])
    with pytest.raises(ControlError) as refused:
        reader.verify_drift(tmp_path / "any.json")
    assert refused.value.status == 403


def _post(proxy: Session, body: object) -> tuple[int, str]:
    control = Client.from_environment(proxy.environment)
    answer = control.send("POST", "/llmproxy/api/v1/verify/drift", orjson.dumps(body))
    return answer.status, str(answer.body)
