"""countTokens: both request forms, and the answer."""

import json

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import TextPart
from llmproxy.providers.gemini import (
    decode_count_tokens_request,
    decode_count_tokens_response,
    encode_count_tokens_response,
)
from llmproxy.providers.gemini_code_assist import decode_count_tokens_request as decode_code_assist_count


def test_contents_form() -> None:
    conversation = decode_count_tokens_request(b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}')
    assert (conversation.model, conversation.messages[0].text) == (None, "hi")


def test_full_request_form_counts_system_and_tools() -> None:
    request = {
        "model": "models/gemini-2.5-flash",
        "contents": [{"parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "tools": [{"functionDeclarations": [{"name": "f"}]}],
    }
    conversation = decode_count_tokens_request(json.dumps({"generateContentRequest": request}).encode())
    assert conversation.model == "models/gemini-2.5-flash"
    assert (conversation.system, [t.name for t in conversation.tools]) == ((TextPart("be brief"),), ["f"])


def test_code_assist_form() -> None:
    body = {"request": {"model": "models/gemini-2.5-pro", "contents": [{"role": "user", "parts": [{"text": "x"}]}]}}
    conversation = decode_code_assist_count(json.dumps(body).encode())
    assert (conversation.model, conversation.messages[0].text) == ("models/gemini-2.5-pro", "x")


def test_response_round_trip() -> None:
    assert json.loads(encode_count_tokens_response(42, 7)) == {
        "totalTokens": 42,
        "cachedContentTokenCount": 7,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 42}],
    }
    assert decode_count_tokens_response(encode_count_tokens_response(42)) == 42
    assert decode_count_tokens_response(b"{}") == 0  # proto-JSON leaves zeros out


@pytest.mark.parametrize("body", [b"[]", b'{"totalTokens": "3"}', b"nope"])
def test_bad_responses_raise_parse_error(body: bytes) -> None:
    with pytest.raises(ParseError, match="gemini count tokens"):
        decode_count_tokens_response(body)
