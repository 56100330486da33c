"""The non-streaming `chat.completion` body: exact shape out, tolerant and strict reading in."""

import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage
from llmproxy.providers.openai_chat import CHAT
from tests.golden.cases import CASES


def body(**fields: object) -> bytes:
    base: dict[str, object] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-x",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    return json.dumps(base | fields).encode()


def test_wire_shape_of_a_tool_call_answer() -> None:
    encoded = json.loads(CHAT.encode_response(CASES["tool_call"]))
    assert encoded == {
        "id": "gold_tool_1",
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": "golden-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "annotations": [],
                    "tool_calls": [
                        {
                            "id": "call_gold_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris","unit":"c"}'},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 40,
            "completion_tokens": 18,
            "total_tokens": 58,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": None,
    }


def test_usage_mapping_both_ways() -> None:
    usage = {
        "prompt_tokens": 2048,
        "completion_tokens": 70,
        "total_tokens": 2118,
        "prompt_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 256, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 35},
    }
    decoded = CHAT.decode_response(body(usage=usage)).usage
    assert decoded == Usage(
        input_tokens=2048, output_tokens=70, cache_read_tokens=1536, cache_write_tokens=256, reasoning_tokens=35
    )
    assert decoded.uncached_input_tokens == 256  # prompt_tokens already includes the cached tokens
    encoded = json.loads(CHAT.encode_response(Completion(usage=decoded)))["usage"]
    assert encoded["prompt_tokens_details"] == {"cached_tokens": 1536, "audio_tokens": 0, "cache_write_tokens": 256}
    assert (encoded["completion_tokens_details"]["reasoning_tokens"], encoded["total_tokens"]) == (35, 2118)


def test_missing_usage_is_none_and_is_not_invented() -> None:
    assert CHAT.decode_response(body()).usage is None
    assert "usage" not in json.loads(CHAT.encode_response(Completion(text="x", usage=None)))


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", StopReason.END_TURN),
        ("length", StopReason.MAX_TOKENS),
        ("tool_calls", StopReason.TOOL_USE),
        ("function_call", StopReason.TOOL_USE),
        ("content_filter", StopReason.CONTENT_FILTER),
        ("something_new", StopReason.OTHER),
        (None, None),
    ],
)
def test_finish_reasons(finish: str | None, stop: StopReason | None) -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": finish}
    assert CHAT.decode_response(body(choices=[choice])).stop_reason is stop


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        (StopReason.END_TURN, "stop"),
        (StopReason.STOP_SEQUENCE, "stop"),
        (StopReason.MAX_TOKENS, "length"),
        (StopReason.CONTEXT_WINDOW_EXCEEDED, "length"),
        (StopReason.TOOL_USE, "tool_calls"),
        (StopReason.CONTENT_FILTER, "content_filter"),
        (StopReason.REFUSAL, "stop"),
    ],
)
def test_stop_reasons_encode(stop: StopReason, finish: str) -> None:
    assert json.loads(CHAT.encode_response(Completion(stop_reason=stop)))["choices"][0]["finish_reason"] == finish


def test_refusal_travels_in_the_refusal_field() -> None:
    refusal = Completion(text="I can't help with that.", stop_reason=StopReason.REFUSAL)
    message = json.loads(CHAT.encode_response(refusal))["choices"][0]["message"]
    assert (message["content"], message["refusal"]) == (None, "I can't help with that.")
    decoded = CHAT.decode_response(CHAT.encode_response(refusal))
    assert (decoded.text, decoded.stop_reason) == ("I can't help with that.", StopReason.REFUSAL)


def test_only_choice_index_0_counts() -> None:
    choices = [
        {"index": 1, "message": {"role": "assistant", "content": "second"}, "finish_reason": "length"},
        {"index": 0, "message": {"role": "assistant", "content": "first"}, "finish_reason": "stop"},
    ]
    decoded = CHAT.decode_response(body(choices=choices))
    assert (decoded.text, decoded.stop_reason) == ("first", StopReason.END_TURN)


def test_no_choices_is_an_empty_unfinished_completion() -> None:
    decoded = CHAT.decode_response(body(choices=[]))
    assert (decoded.id, decoded.model, decoded.created) == ("chatcmpl-1", "gpt-x", 1700000000)
    assert (decoded.text, decoded.tool_calls, decoded.stop_reason) == ("", (), None)


def test_custom_and_legacy_calls() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_c", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin"}}],
        "function_call": {"name": "add", "arguments": '{"a":1}'},
    }
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    assert CHAT.decode_response(body(choices=[choice])).tool_calls == (
        ToolCall("call_c", "apply_patch", {}, invalid_arguments="*** Begin"),
        ToolCall("", "add", {"a": 1}),
    )


def test_missing_id_and_model_are_filled_deterministically() -> None:
    completion = Completion(text="hello")
    first = json.loads(CHAT.encode_response(completion, {"model": "gpt-from-request"}))
    again = json.loads(CHAT.encode_response(completion))
    assert first["id"].startswith("chatcmpl-")
    assert first["id"] == again["id"]
    assert (first["model"], again["model"], first["created"]) == ("gpt-from-request", "", 0)
    assert CHAT.decode_response(CHAT.encode_response(completion)) == CHAT.visible(completion)


def test_visible_drops_what_chat_completions_cannot_say() -> None:
    case = CASES["reasoning"]
    assert CHAT.visible(case).reasoning is None
    assert CHAT.visible(case).reasoning_signature is None
    assert CHAT.decode_response(CHAT.encode_response(case)) == CHAT.visible(case)
    assert CHAT.visible(case).text == case.text
    assert CHAT.visible(case).usage == case.usage


def test_an_errored_completion_is_sent_as_its_error_body() -> None:
    failed = Completion(text="partial", error=ProviderError(ErrorKind.OVERLOADED, "busy"))
    assert json.loads(CHAT.encode_response(failed)) == {
        "error": {"message": "busy", "type": "server_error", "param": None, "code": "server_overloaded"}
    }
    decoded = CHAT.decode_response(CHAT.encode_response(failed))
    assert decoded.error == ProviderError(ErrorKind.OVERLOADED, "busy", "server_error")
    assert (decoded.text, decoded.stop_reason) == ("", None)


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"not json", "not valid JSON"),
        (b'"text"', "$: expected an object"),
        (b'{"choices":{}}', "$.choices: expected a list"),
        (b'{"choices":[{"index":0,"message":{"content":5}}]}', "$.choices[0].message.content"),
        (b'{"choices":[{"index":0}]}', "$.choices[0].message"),
        (b'{"created":"now","choices":[]}', "$.created"),
        (b'{"usage":{"prompt_tokens":"3"}}', "$.usage.prompt_tokens"),
    ],
)
def test_bad_bodies_name_the_json_path(raw: bytes, where: str) -> None:
    with pytest.raises(ParseError, match="openai chat response") as caught:
        CHAT.decode_response(raw)
    assert where in str(caught.value)
