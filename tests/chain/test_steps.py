"""The chain's values, with plain objects: a reply cannot be changed once made, and what it means is decoded
once however often it is served."""

import pytest

from llmproxy.chain import Reply, Source
from llmproxy.chain.reply import Meaning
from llmproxy.model import Completion, StopReason


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
