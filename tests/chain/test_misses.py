"""The answer to a strict miss: each API's own invalid-request error, which its clients raise at once with
llmproxy's diagnostic as the message, marked not to be retried; any status on request."""

import json

import pytest

from llmproxy.chain.misses import miss_reply
from llmproxy.model import ErrorKind, Provider
from llmproxy.providers.registry import error_encoder
from llmproxy.providers.routes import detect

ROUTES = {
    "anthropic": ("api.anthropic.com", "/v1/messages"),
    "openai": ("api.openai.com", "/v1/responses"),
    "gemini": ("generativelanguage.googleapis.com", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
    "code assist": ("cloudcode-pa.googleapis.com", "/v1internal:streamGenerateContent"),
    "bedrock": ("bedrock-runtime.us-east-1.amazonaws.com", "/model/anthropic.claude-v2/converse"),
    "ollama": ("localhost", "/api/chat"),
}


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_miss_is_the_apis_own_invalid_request_error(name: str) -> None:
    route = detect(*ROUTES[name], {}, method="POST")
    assert route is not None
    reply = miss_reply(route, "no recorded exchange matches; closest is exchange 3")
    assert reply.status == 400
    headers = dict(reply.headers)
    assert headers["x-should-retry"] == "false"
    assert headers["x-llmproxy-miss"] == "1"
    assert "closest is exchange 3" in reply.body.decode()
    # exactly the provider's own error, so its SDK raises its usual class
    own = error_encoder(route)(ErrorKind.INVALID_REQUEST, "no recorded exchange matches; closest is exchange 3")
    assert reply.body == own.body
    assert headers["content-type"] == own.headers["content-type"]


def test_the_gemini_error_says_invalid_argument() -> None:
    route = detect(*ROUTES["gemini"], {}, method="POST")
    error = json.loads(miss_reply(route, "why").body)["error"]
    assert (error["code"], error["status"], error["message"]) == (400, "INVALID_ARGUMENT", "why")


def test_another_status_on_request_and_not_found_off_the_apis() -> None:
    route = detect(*ROUTES["anthropic"], {}, method="POST")
    assert route is not None
    assert route.provider is Provider.ANTHROPIC
    asked = miss_reply(route, "why", status=599)
    assert asked.status == 599
    assert "x-should-retry" not in dict(asked.headers)  # retried by the client's own rules, as MockServer's
    plain = miss_reply(None, "GET https://example.com/: no recorded exchange matches")
    assert plain.status == 404
    error = json.loads(plain.body)["error"]
    assert error == {"type": "not_found_error", "message": "GET https://example.com/: no recorded exchange matches"}
    assert dict(plain.headers)["x-should-retry"] == "false"
