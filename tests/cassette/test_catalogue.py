"""The secret catalogue: every kind is found where it appears, with its own label, and nothing else is."""

import re
from pathlib import Path

import orjson
import pytest

from llmproxy.cassette import secrets
from llmproxy.cassette.catalogue import FIELD_WORDS, RULES, SECRET_FIELDS
from llmproxy.cassette.redact import Redactor
from tests.secret_corpus import CONTEXTS, FIELDS, HEADERS, QUERIES, SHAPES, field_values, planted_text

REDACTOR = Redactor()


def test_the_catalogue_knows_at_least_forty_kinds_and_stays_on_the_fast_path() -> None:
    assert len({rule.kind for rule in RULES}) >= 40
    # the crate's SIMD prefilter needs keywords of three characters or more (llmproxy/cassette/secrets.py)
    keywords = {keyword for rule in RULES for keyword in rule.keywords}
    assert all(len(keyword) >= 3 and keyword == keyword.lower() and keyword.isascii() for keyword in keywords)


@pytest.mark.parametrize(("kind", "key"), sorted(SHAPES.items()))
def test_every_shape_is_found_in_text_json_and_escaped_json_with_its_kind(kind: str, key: str) -> None:
    placeholder = secrets.placeholder(key, kind.split("#")[0])
    assert REDACTOR.text(f"here: {key} .") == f"here: {placeholder} ."
    assert REDACTOR.json({"content": [f"line\n{key}\n"]}) == {"content": [f"line\n{placeholder}\n"]}
    assert key not in REDACTOR.text(orjson.dumps({"t": f"x\n{key}"}).decode())


@pytest.mark.parametrize(("kind", "planted"), sorted(CONTEXTS.items()))
def test_every_context_keeps_its_context_and_replaces_the_secret(kind: str, planted: tuple[str, str]) -> None:
    text, secret = planted
    redacted = REDACTOR.text(text)
    assert secret not in redacted
    assert redacted.replace(secrets.placeholder(secret, _kind_in(redacted)), secret) == text


def _kind_in(text: str) -> str:
    match = re.search(r"<redacted:([a-z0-9\-]+):", text)
    assert match is not None
    return match[1]


def test_fields_headers_and_query_keys_secret_by_name() -> None:
    redacted = orjson.dumps(REDACTOR.json({"request": FIELDS})).decode()
    assert [value for value in field_values().values() if value in redacted] == []
    for name, value in HEADERS.items():
        assert REDACTOR.header(name, value).startswith("<redacted:")
    path = "/v1?" + "&".join(f"{key}={value}" for key, value in QUERIES.items()) + "&units=metric"
    assert [value for value in QUERIES.values() if value in REDACTOR.path(path)] == []
    assert REDACTOR.path(path).endswith("&units=metric")


def test_a_body_with_a_secret_field_is_never_skipped_by_the_fast_scan() -> None:
    """The one-pass scan decides whether a document is walked: every secret field name must show in it."""
    for field in SECRET_FIELDS:
        assert re.search(FIELD_WORDS + r"$", field), field
    for spelling in ("clientSecret", "CLIENT-SECRET", "refresh_token", "AccessToken", "privateKey", "apiKey"):
        assert REDACTOR.json({"a": {spelling: "opaque"}}) == {
            "a": {spelling: secrets.placeholder("opaque", _label(spelling))}
        }


def _label(name: str) -> str:
    return secrets.label(name)


def test_user_fields_are_found_however_they_are_spelled() -> None:
    redactor = Redactor(frozenset({"userEmail"}))
    for spelling in ("user_email", "USER-EMAIL", "userEmail"):
        assert redactor.json({spelling: "a@b.c"}) == {spelling: secrets.placeholder("a@b.c", secrets.label(spelling))}


def test_what_is_not_a_secret_stays() -> None:
    text = (
        "max_tokens=1024; password: str; token_count: 5; the secret: 42; basic understanding; "
        "task-management-system; ask desk SKILL; sorted(items, key=lambda x: x); https://docs.example.com/a?b=c"
    )
    assert REDACTOR.text(text) == text
    logprobs = {"token": "Hello", "logprob": -0.25, "bytes": [72]}
    assert REDACTOR.json({"content": [logprobs]}) == {"content": [logprobs]}
    usage = {"usage": {"input_tokens": 25, "output_tokens": 21, "max_tokens": 1024}}
    assert REDACTOR.json(usage) is usage  # not even walked


def test_the_whole_corpus_text_is_redacted_and_redacting_again_changes_nothing() -> None:
    text = planted_text()
    once = REDACTOR.text(text)
    assert [key for key in SHAPES.values() if key in once] == []
    assert REDACTOR.text(once) == once
    assert list(secrets.find(once)) == []


def test_the_security_model_lists_every_kind_of_the_catalogue() -> None:
    page = (Path(__file__).parents[2] / "docs" / "security.md").read_text()
    kinds = {rule.kind for rule in RULES} - {"field"}  # a field's kind is its word: password, token…
    assert sorted(kind for kind in kinds if f"`{kind}`" not in page) == []
