"""A recorded run as telemetry (`llmproxy export otlp CASSETTE…`): each stored exchange becomes the call it was
when it was recorded — its time, its duration and first byte, its usage priced at that time — with the facts
of its request, so its span is the one a running llmproxy would have sent, at the time it happened."""

from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

from llmproxy.cassette.decode import decode_answer
from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.history import inflate
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.raw import raw_exchange
from llmproxy.chain.incoming import Incoming
from llmproxy.errors import CassetteError
from llmproxy.meter import Answered, Call, Meter
from llmproxy.model import Completion
from llmproxy.model.exchange import RawResponse
from llmproxy.providers.registry import chat_codec
from llmproxy.telemetry.conventions import Facts, facts_of


def recorded_calls(cassettes: Sequence[Path], meter: Meter) -> Iterator[tuple[Call, Facts]]:
    """Every exchange of `cassettes`, in file order, as a priced call (`meter` prices it) and its facts. Raises
    CassetteError for a file that is not a cassette."""
    for path in cassettes:
        try:
            exchanges = inflate(read_exchanges(path))
        except ValueError as error:
            raise CassetteError(f"{path}: {error}") from None
        for exchange in exchanges:
            yield _call(exchange, meter)


def _call(exchange: Exchange, meter: Meter) -> tuple[Call, Facts]:
    raw = raw_exchange(exchange)
    incoming = Incoming(raw.request)
    response = raw.response
    completion = _completion(incoming, response)
    timings = exchange.timings
    total = timings.total_ms or 0.0
    answered = Answered.INJECTED if exchange.injected else Answered.UPSTREAM
    call = Call(
        method=raw.request.method,
        host=raw.request.host,
        path=incoming.path,
        answered=answered,
        status=response.status if response is not None else None,
        provider=incoming.route.provider if incoming.route is not None else None,
        model=(completion.model if completion is not None and completion.model else None) or incoming.model,
        usage=completion.usage if completion is not None else None,
        tool_calls=completion.tool_calls if completion is not None else (),
        streamed=exchange.streaming,
        latency_ms=timings.total_ms,
        ttft_ms=timings.ttfb_ms if exchange.streaming else None,
        detail=exchange.error or "",
        at=timings.started_at + timedelta(milliseconds=total),
    )
    facts = facts_of(incoming, completion)._replace(faults=tuple(injection.kind for injection in exchange.injected))
    return meter.add(call), facts


def _completion(incoming: Incoming, response: RawResponse | None) -> Completion | None:
    route = incoming.route
    codec = chat_codec(route) if route is not None else None
    if codec is None or response is None:
        return None
    events = [event.data for event in response.events] if response.events is not None else None
    try:
        return decode_answer(codec, response.status, response.body or b"", events)
    except Exception:  # not what the API sends: exported without tokens
        return None
