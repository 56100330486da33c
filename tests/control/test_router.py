"""The router's rules that no endpoint of today's API shows alone: an endpoint that does not say it only reads
is refused to the read-only token (fail closed), and a handler that fails answers one line, not a traceback."""

import pytest
from pydantic import BaseModel

from llmproxy.control.auth import Access
from llmproxy.control.router import Call, Endpoint, Router


class Done(BaseModel):
    done: bool = True


def nothing(call: Call[BaseModel, BaseModel, BaseModel]) -> Done:
    return Done()


def broken(call: Call[BaseModel, BaseModel, BaseModel]) -> Done:
    raise RuntimeError("a bug")


ROUTER = Router(
    "/api",
    [
        Endpoint("POST", "/unclassified", "says nothing of its access", nothing, Done),
        Endpoint("GET", "/reads", "only reads", nothing, Done, Access.READ),
        Endpoint("GET", "/broken", "fails", broken, Done, Access.READ),
    ],
    "test",
    "0",
)


def test_an_endpoint_that_does_not_say_it_reads_is_refused_to_the_read_only_token() -> None:
    assert ROUTER.handle("POST", "/api/unclassified", b"", Access.READ).status == 403
    assert ROUTER.handle("POST", "/api/unclassified", b"", Access.MUTATE).status == 200
    assert ROUTER.handle("GET", "/api/reads", b"", Access.READ).status == 200


def test_a_failing_handler_answers_500_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    answer = ROUTER.handle("GET", "/api/broken", b"", Access.READ)
    assert (answer.status, answer.body) == (500, {"error": "llmproxy failed to answer GET /api/broken: a bug"})
    assert "Traceback" not in str(answer.body)
    assert ROUTER.handle("GET", "/api/reads", b"", Access.READ).status == 200
