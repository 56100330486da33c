"""A Responses background run as the one call it is: the create answers `queued` with no usage, and the
poll (`GET /responses/{id}`) that finds the response finished carries its answer and usage. The report
holds such a create back until that poll, then prices the create with the poll's answer — counted once,
under the create's exchange; the polls themselves are not calls. A create whose run never finished in the
cassette is a call as it was recorded (no usage).
"""

from dataclasses import dataclass, field, replace

from llmproxy.analysis.decode import ChatExchange
from llmproxy.cassette.decode import decode_response, exchange_route
from llmproxy.cassette.model import Exchange
from llmproxy.model import Operation
from llmproxy.providers.registry import chat_codec

POLL = "background poll"
"""Why a poll is skipped: its answer, if final, was counted with its create."""


@dataclass(slots=True)
class BackgroundRuns:
    """Creates waiting for their final answer, by response id, in arrival order."""

    waiting: dict[str, tuple[Exchange, ChatExchange]] = field(default_factory=dict)

    def hold(self, exchange: Exchange, decoded: ChatExchange) -> bool:
        """Hold a create still running (no usage, no stop, no error) until its final poll; True if held."""
        done = decoded.completion
        if decoded.route.operation is not Operation.RESPONSES or done is None or not done.id:
            return False
        if done.usage is not None or done.error is not None or done.stop_reason is not None:
            return False
        self.waiting[done.id] = (exchange, decoded)
        return True

    def poll(self, exchange: Exchange) -> tuple[Exchange, ChatExchange] | str | None:
        """For a poll of a held run: its create with the final answer, or `POLL` while it runs; None for an
        exchange that is no poll of a held run."""
        route = exchange_route(exchange)
        if route is None or route.operation is not Operation.RESPONSE_RETRIEVE or exchange.response is None:
            return None
        codec = chat_codec(replace(route, operation=Operation.RESPONSES))
        if codec is None or exchange.response.status >= 400:
            return None
        try:
            answer = decode_response(codec, exchange.response)
        except ValueError:
            return None
        if answer.id not in self.waiting:
            return None
        if answer.usage is None and answer.error is None and answer.stop_reason is None:
            return POLL
        create, decoded = self.waiting.pop(answer.id)
        error = answer.error.message if answer.error is not None else None
        return create, replace(decoded, completion=answer, usage=answer.usage, error=error)

    def unfinished(self) -> list[tuple[Exchange, ChatExchange]]:
        """The held creates no poll finished, to count as recorded."""
        held, self.waiting = list(self.waiting.values()), {}
        return held
