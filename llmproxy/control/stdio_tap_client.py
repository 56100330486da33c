"""`llmproxy mcp-tap` inside a run (`llmproxy record|replay -- agent`), reached through the run's control API,
whose variables the run gives every process under it: the run's writer records (one cassette per run, and its
journal keeps what was handed over if the run is killed) and the run's replay answers (its hits, misses and
unused exchanges counting the tap's too)."""

from typing import Any

import orjson

from llmproxy.control.client import Client
from llmproxy.control.stdio_tap_models import StdioExchange, StdioLine, StdioRequest
from llmproxy.model.exchange import RawExchange


class RunRecorder:
    """Hands each exchange to the run's recording."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.handed = 0

    def add(self, exchange: RawExchange) -> None:
        response = exchange.response
        assert response is not None  # the tap records answered requests only
        if response.events is not None:
            written = [(event.t_ms, event.data) for event in response.events]
        else:
            written = [(exchange.ttfb_ms or 0.0, response.body or b"")]
        self.client.record_stdio(
            StdioExchange(
                server=exchange.request.host,
                request=orjson.loads(exchange.request.body),
                written=[StdioLine(t_ms=at, message=orjson.loads(line)) for at, line in written],
                started_at=exchange.started_at,
                total_ms=exchange.total_ms or 0.0,
            )
        )
        self.handed += 1


class RunAnswers:
    """Answers from the run's replay; `records_misses`: what it lacks goes to the server and is recorded (not
    a miss of the run's)."""

    def __init__(self, client: Client, server: str, records_misses: bool = False) -> None:
        self.client = client
        self.server = server
        self.records_misses = records_misses

    def answer(self, message: bytes) -> list[Any] | str:
        asked = StdioRequest(server=self.server, request=orjson.loads(message), records_misses=self.records_misses)
        answer = self.client.answer_stdio(asked)
        if answer.written is not None:
            return answer.written
        return answer.miss or "the run's replay answered nothing"
