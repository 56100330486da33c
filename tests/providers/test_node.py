"""Node: untrusted JSON read with paths in every error."""

import pytest

from llmproxy.errors import ParseError
from llmproxy.providers.node import Node


def test_reads_typed_values_and_paths() -> None:
    body = Node.parse(b'{"a": {"b": [1, "x", null]}, "flag": true}', "test body")
    items = list(body["a"]["b"].items())
    assert items[0].integer() == 1
    assert items[1].string() == "x"
    assert items[2].opt_string() is None
    assert items[1].path == "$.a.b[1]"
    assert body["flag"].boolean() is True
    assert body["missing"].boolean(default=True) is True
    assert body["missing"]["deeper"].present is False
    assert list(body["missing"].items()) == []


def test_errors_name_what_and_where() -> None:
    body = Node.parse(b'{"content": [{"type": 3}]}', "anthropic response")
    node = next(body["content"].items())["type"]
    with pytest.raises(ParseError, match=r"^anthropic response: \$\.content\[0\]\.type: expected a string, got 3$"):
        node.string()
    with pytest.raises(ParseError, match=r"\$\.content: expected an object with 'x'"):
        body["content"]["x"]
    with pytest.raises(ParseError, match="expected a list"):
        list(next(body["content"].items())["type"].items())
    with pytest.raises(ParseError, match=r"\$\.nope: expected an integer, got nothing"):
        body["nope"].integer()


def test_booleans_are_not_integers() -> None:
    with pytest.raises(ParseError, match="expected an integer"):
        Node.parse(b"true", "t").integer()


def test_invalid_json_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"^req: not valid JSON"):
        Node.parse(b"{nope", "req")


def test_null_reads_as_absent_and_first_spelling_wins() -> None:
    body = Node.parse(b'{"usage": null, "inline_data": {"x": 1}}', "gemini")
    assert body["usage"]["input_tokens"].opt_integer() == 0
    assert body.first("inlineData", "inline_data")["x"].integer() == 1
    assert body.first("a", "b").path == "$.a"


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ParseError) as info:
        Node.parse(b'{"t": "' + b"x" * 500 + b'"}', "w")["t"].integer()
    assert len(str(info.value)) < 120
