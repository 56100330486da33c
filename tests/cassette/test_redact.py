import string
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmproxy.cassette import secrets
from llmproxy.cassette.check import check_file
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from tests.cassette.factory import SDK_HEADERS, exchange, request, response, sse_events

KEYS = {
    "sk-ant": "sk-ant-api03-" + "Zq9xT3vB7nK2mW5pL8rY4cF6hJ1dG0sA" * 3,
    "sk": "sk-proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d",
    "sess": "sess-" + "A1b2C3d4E5f6G7h8I9j0K1l2",
    "google": "AIzaSyD-" + "x1Y2z3A4b5C6d7E8f9G0h1I2j3K4l5M",
    "google-oauth": "ya29.a0AfB_" + "byC1d2E3f4G5h6I7j8K9l0",
    "aws-key-id": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
SECRET_VALUES = st.sampled_from(sorted(KEYS.values()))
REDACTOR = Redactor(frozenset({"user_email"}))
# text that cannot contain anything key-shaped: no digits, no "-", "_" or "." inside words
PLAIN = st.text(alphabet=string.ascii_letters + " ,;!?()'\n\"é漢", max_size=80)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize(("kind", "key"), sorted(KEYS.items()))
def test_every_key_kind_is_replaced_by_a_stable_labelled_placeholder(kind: str, key: str) -> None:
    redacted = REDACTOR.text(f"here: {key}, again {key}.")
    expected = secrets.placeholder(key, kind)
    assert redacted == f"here: {expected}, again {expected}."
    assert expected.startswith(f"<redacted:{kind}:")


def test_secret_headers_keep_their_auth_scheme() -> None:
    headers = REDACTOR.headers(
        [
            ("Authorization", f"Bearer {KEYS['sk-ant']}"),
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260501/us-east-1/bedrock/aws4_request",
            ),
            ("X-Api-Key", "short"),
            ("cookie", "session=abc"),
            ("openai-organization", "org-123"),
            ("user-agent", f"tool/1.0 {KEYS['github']}"),
            ("content-type", "application/json"),
        ]
    )
    assert headers[0] == ("Authorization", f"Bearer {secrets.placeholder(KEYS['sk-ant'], 'sk-ant')}")
    assert headers[1][1].startswith("AWS4-HMAC-SHA256 <redacted:authorization:")
    assert headers[2][1] == secrets.placeholder("short", "x-api-key")
    assert headers[3][1].startswith("<redacted:cookie:")
    assert headers[4][1].startswith("<redacted:openai-organization:")
    assert headers[5][1] == f"tool/1.0 {secrets.placeholder(KEYS['github'], 'github')}"
    assert headers[6] == ("content-type", "application/json")


def test_query_keys_and_path_keys() -> None:
    path = "/v1beta/models/g:streamGenerateContent?alt=sse&key=abc123&X-Amz-Signature=ff00&empty="
    assert REDACTOR.path(path) == (
        "/v1beta/models/g:streamGenerateContent?alt=sse"
        f"&key={secrets.placeholder('abc123', 'query')}&X-Amz-Signature={secrets.placeholder('ff00', 'query')}&empty="
    )
    assert REDACTOR.path(f"/u/{KEYS['google']}/x") == f"/u/{secrets.placeholder(KEYS['google'], 'google')}/x"


def test_named_fields_default_and_user_given() -> None:
    body = {"password": "hunter2", "nested": [{"userEmail": "a@b.c", "api_key": 12345}], "passwords": "kept"}
    assert REDACTOR.json(body) == {
        "password": secrets.placeholder("hunter2", "password"),
        "nested": [
            {"userEmail": secrets.placeholder("a@b.c", "useremail"), "api_key": secrets.placeholder("12345", "api-key")}
        ],
        "passwords": "kept",
    }


def test_aws_secret_in_an_obvious_context_and_bearer_tokens_in_text() -> None:
    text = (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY; 'Authorization: Bearer abcdef0123456789xyz'"
    )
    redacted = REDACTOR.text(text)
    assert "wJalr" not in redacted
    assert "abcdef0123" not in redacted
    assert "aws_secret_access_key = <redacted:aws-secret:" in redacted
    assert "Bearer <redacted:bearer:" in redacted


def test_a_key_after_a_json_escape_is_found() -> None:
    assert KEYS["sk"] not in REDACTOR.text(orjson.dumps({"t": "line\n" + KEYS["sk"]}).decode())


def test_words_that_merely_look_like_prefixes_stay() -> None:
    text = "task-management-system-overview and bearer of bad news ASIAPACIFIC region eyJ"
    assert REDACTOR.text(text) == text


def test_disabled_redactor_changes_nothing() -> None:
    off = Redactor(enabled=False)
    assert off.text(KEYS["sk-ant"]) == KEYS["sk-ant"]
    assert off.headers([("authorization", "x")]) == (("authorization", "x"),)


@settings(max_examples=80)
@given(value=JSON, secret=SECRET_VALUES, where=st.integers(min_value=0, max_value=200))
def test_a_planted_key_never_survives_anywhere_in_json(value: object, secret: str, where: int) -> None:
    planted = _plant(value, secret, where)
    redacted = REDACTOR.json(planted)
    assert secret not in orjson.dumps(redacted).decode()
    assert REDACTOR.json(redacted) == redacted


@settings(max_examples=80)
@given(text=st.text(max_size=120), secret=SECRET_VALUES, where=st.integers(min_value=0, max_value=200))
def test_a_planted_key_never_survives_in_text_and_redaction_is_idempotent(text: str, secret: str, where: int) -> None:
    index = where % (len(text) + 1)
    planted = f"{text[:index]} {secret} {text[index:]}"
    redacted = REDACTOR.text(planted)
    assert secret not in redacted
    assert REDACTOR.text(redacted) == redacted
    assert REDACTOR.data(redacted.encode()) == redacted.encode()


@settings(max_examples=80)
@given(text=st.text(max_size=200))
def test_redaction_is_idempotent_on_arbitrary_text(text: str) -> None:
    once = REDACTOR.text(text)
    assert REDACTOR.text(once) == once
    assert REDACTOR.path(REDACTOR.path("/p?key=" + once)) == REDACTOR.path("/p?key=" + once)


@settings(max_examples=80)
@given(text=PLAIN)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert REDACTOR.text(text) == text
    assert REDACTOR.json({"content": text, "list": [text]}) == {"content": text, "list": [text]}


@settings(max_examples=40)
@given(data=st.binary(max_size=200), secret=SECRET_VALUES)
def test_keys_inside_binary_data_are_replaced_byte_for_byte(data: bytes, secret: str) -> None:
    planted = data + b"\xff " + secret.encode() + b" \x00" + data
    redacted = REDACTOR.data(planted)
    assert secret.encode() not in redacted
    assert REDACTOR.data(redacted) == redacted


def _plant(value: object, secret: str, where: int) -> object:
    """`value` with the secret inside one of its strings (keys included), or wrapped with it when it has none."""
    strings = _count_strings(value)
    if not strings:
        return [value, f" {secret} "]
    target = [where % strings]

    def walk(node: object) -> object:
        if isinstance(node, str):
            target[0] -= 1
            return f"{node} {secret} {node}" if target[0] == -1 else node
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, dict):
            return {walk(k): walk(v) for k, v in node.items()}
        return node

    return walk(value)


def _count_strings(node: object) -> int:
    if isinstance(node, str):
        return 1
    if isinstance(node, list):
        return sum(map(_count_strings, node))
    if isinstance(node, dict):
        return sum(_count_strings(k) + _count_strings(v) for k, v in node.items())
    return 0


def test_no_fixture_key_reaches_a_written_cassette(tmp_path: Path) -> None:
    """Every key above, planted in a header, a query parameter, a request body, a response body and a stream
    event of recorded exchanges: the file written holds none of them, and `cassette check` finds nothing."""
    writer = CassetteWriter.open(tmp_path / "c.json", Redactor())
    for kind, key in KEYS.items():
        body = {"model": "m", "messages": [{"role": "user", "content": f"my {kind} key is {key}"}]}
        planted = (*SDK_HEADERS, ("x-trace", key), ("authorization", key))
        raw = request(body, path=f"/v1/messages?key={key}", headers=planted)
        writer.add(exchange(raw, response(orjson.dumps({"echo": key}))))
        events = sse_events({"type": "content_block_delta", "text": key})
        writer.add(exchange(request(body), response(events=events, content_type="text/event-stream")))
    writer.close()
    text = (tmp_path / "c.json").read_text()
    assert [key for key in KEYS.values() if key in text] == []
    assert check_file(tmp_path / "c.json").findings == []
    assert len(load_cassette(tmp_path / "c.json").exchanges) == 2 * len(KEYS)
