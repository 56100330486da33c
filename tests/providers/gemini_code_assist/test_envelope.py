"""Code Assist envelopes around the Gemini bodies, as the Gemini CLI reads and writes them."""

import json
from dataclasses import replace
from pathlib import Path

from llmproxy.model import Completion, ErrorKind, ProviderError, Role
from llmproxy.providers.gemini import GENERATE
from llmproxy.providers.gemini_code_assist import CODE_ASSIST
from tests.golden.cases import CASES

FIXTURE = Path(__file__).parents[2] / "fixtures" / "requests" / "gemini_code_assist" / "tool-round-trip.json"


def test_request_envelope_names_the_model() -> None:
    body = json.loads(FIXTURE.read_bytes())
    conversation = CODE_ASSIST.decode_request(FIXTURE.read_bytes())
    assert conversation.model == "gemini-2.5-pro"
    # the inner request is the Gemini codec's, read as is
    assert replace(conversation, model=None) == GENERATE.decode_request(json.dumps(body["request"]).encode())
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT, Role.USER]


def test_response_envelope_carries_the_id_as_trace_id() -> None:
    wrapped = json.loads(CODE_ASSIST.encode_response(CASES["tool_call"]))
    assert set(wrapped) == {"response", "traceId"}
    assert wrapped["traceId"] == "gold_tool_1"
    plain = json.loads(GENERATE.encode_response(CASES["tool_call"]))
    assert wrapped["response"] == {key: value for key, value in plain.items() if key != "responseId"}
    assert CODE_ASSIST.decode_response(json.dumps(wrapped).encode()) == GENERATE.visible(CASES["tool_call"])


def test_each_stream_event_wraps_a_response_and_errors_travel_bare() -> None:
    partial = Completion(text="Half", error=ProviderError(ErrorKind.OVERLOADED, "busy"))
    events = [json.loads(event[6:]) for event in CODE_ASSIST.encode_stream(partial, delta_chars=2)]
    assert [set(event) for event in events] == [{"response", "traceId"}] * 2 + [{"error"}]
    completion = CODE_ASSIST.decode_stream(CODE_ASSIST.encode_stream(partial, delta_chars=2))
    assert completion == GENERATE.visible(partial)
