"""The chain's values, with plain objects: a reply and what a request says cannot be changed once made, and what
a reply means is decoded once however often it is served."""

import pytest

from llmproxy.chain import Incoming, Reply, Source
from llmproxy.chain.reply import Meaning
from llmproxy.model import Completion, StopReason
from llmproxy.model.exchange import RawRequest
from tests.samples import CHAT


def anthropic() -> Incoming:
    sample = CHAT[0]
    return Incoming(RawRequest("POST", "https", sample.host, 443, sample.path, "HTTP/1.1", (), sample.data, None))


def test_a_reply_cannot_be_changed_and_what_it_means_is_decoded_once() -> None:
    decodes: list[int] = []
    completion = Completion(stop_reason=StopReason.END_TURN)

    def decode() -> Completion:
        decodes.append(1)
        return completion

    reply = Reply(200, (), b"{}", source=Source.CASSETTE, meaning=Meaning(decode), shared=True)
    with pytest.raises(AttributeError):
        reply.status = 500  # type: ignore[misc]
    shaped = reply._replace(events=((0.0, b"{}"),), body=None, shared=False)
    assert reply.understood() is completion
    assert shaped.understood() is completion
    assert reply.understood() is completion
    assert decodes == [1]  # served again and again, decoded once
    assert reply.completion is None  # still as it was made


def test_what_a_request_says_is_read_once_and_cannot_be_changed() -> None:
    incoming = anthropic()
    decoded = incoming.decoded
    assert incoming.decoded is decoded
    assert (incoming.route, incoming.model, incoming.path) == (decoded.route, decoded.model, "/v1/messages")
    assert incoming.route is not None
    assert incoming.codec is not None
    with pytest.raises(AttributeError):
        decoded.model = "another"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        incoming.route = None  # type: ignore[misc]
