"""The requests a report keeps (a history's tail, re-sent parts once) rebuild the conversation each one sent."""

from pathlib import Path

import orjson
import pytest

from llmproxy.analysis.kept import KeptRequests
from llmproxy.analysis.sources import Recorded
from llmproxy.cassette.decode import decode_exchange, exchange_route
from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.history import inflate
from llmproxy.cassette.model import TextBody
from llmproxy.errors import UnsupportedError
from llmproxy.pricing import PriceBook
from tests.analysis.reports import ROOT

CASSETTES = sorted((ROOT / "cassettes").glob("*.json"))


def kept_from(path: Path) -> KeptRequests:
    kept = KeptRequests()
    for exchange in read_exchanges(path):
        kept.add(exchange.id, exchange.request, exchange_route(exchange))
    return kept


@pytest.mark.parametrize("path", CASSETTES, ids=lambda path: path.name)
def test_each_request_is_rebuilt_as_it_was_sent(path: Path) -> None:
    kept = kept_from(path)
    rebuilt = 0
    for whole in inflate(read_exchanges(path)):
        try:
            sent = decode_exchange(whole).conversation
        except (ValueError, UnsupportedError):  # not a chat call (the report keeps no conversation for it)
            continue
        assert kept.conversation(whole.id) == sent
        rebuilt += 1
    assert rebuilt


def test_the_parts_every_turn_resends_are_kept_once() -> None:
    path = ROOT / "cassettes" / "claude-code-tool-loop.json"
    kept = kept_from(path)
    bodies = [kept.body(e.id) for e in read_exchanges(path) if e.request.url.endswith("/v1/messages?beta=true")]
    assert len(bodies) >= 2
    assert len({id(body["tools"]) for body in bodies}) == 1  # the same tool definitions: one copy
    assert len({id(body["messages"]) for body in bodies}) == len(bodies)  # each request's own history tail


def test_a_request_whose_history_cannot_be_rebuilt_has_no_conversation() -> None:
    path = ROOT / "cassettes" / "claude-code-tool-loop.json"
    exchanges = read_exchanges(path)
    kept = KeptRequests()
    later = next(exchange for exchange in exchanges if exchange.request.extends is not None)
    kept.add(later.id, later.request, exchange_route(later))  # the request it extends was never kept
    assert kept.conversation(later.id) is None
    assert kept.conversation(12345) is None


def test_a_body_stored_as_text_is_decoded_as_sent() -> None:
    path = ROOT / "cassettes" / "quickstart.json"
    exchange = read_exchanges(path)[0]
    text = TextBody(text=orjson.dumps(exchange.request.body.json_).decode())  # type: ignore[union-attr]
    request = exchange.request.model_copy(update={"body": text})
    kept = KeptRequests()
    kept.add(exchange.id, request, exchange_route(exchange))
    assert kept.conversation(exchange.id) == decode_exchange(exchange).conversation


def test_a_report_reads_the_appendix_conversation_from_what_it_kept() -> None:
    recorded = Recorded([ROOT / "cassettes" / "claude-code-tool-loop.json"], PriceBook())
    richest = max(recorded.calls, key=lambda call: call.message_count)
    conversation = recorded.conversation(richest)
    assert conversation is not None
    assert len(conversation.messages) == richest.message_count
