"""Redaction at write time: nothing secret reaches a cassette, and the same secret always reads the same.

What goes (see `secrets` for the lists and the placeholder form):

* secret headers (``authorization``, ``x-api-key``, cookies, AWS session tokens, account ids, any name
  with ``token``, ``secret``, ``auth``… in it): the whole value, keeping an auth scheme word
  (``Bearer <redacted:sk-ant:…>``);
* secret query keys (``key``, ``sig``, ``X-Amz-Signature``, and every secret field name): the value;
* JSON fields named as secrets (``api_key``, ``password``, ``token``, ``client_secret``… at any depth, plus
  ``--redact-field NAME``): string and number values; a ``token`` beside a ``logprob`` is a sampled token,
  not a credential, and stays;
* every secret of the catalogue anywhere else: header values, paths, JSON strings and keys, text.

Every method is idempotent, so replay can redact an incoming request with the same `Redactor` and compare
it with the cassette's redacted form.
"""

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.cassette import secrets
from llmproxy.cassette.secrets import Scanner

_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|aws4-hmac-sha256|negotiate)(\s+)(.+)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Redactor:
    fields: frozenset[str] = frozenset()  # extra JSON field names (``--redact-field``), matched like the defaults
    enabled: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", frozenset(secrets.field_key(f) for f in self.fields))

    def headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        if not self.enabled:
            return tuple(headers)
        return tuple((name, self.header(name, value)) for name, value in headers)

    def header(self, name: str, value: str) -> str:
        if not self.enabled:
            return value
        return _header(name, value)

    def path(self, path: str) -> str:
        """A request path with its query: secret query values replaced, key-shaped strings anywhere too."""
        if not self.enabled:
            return path
        bare, question, query = path.partition("?")
        if question:
            pairs = []
            for pair in query.split("&"):
                key, equals, value = pair.partition("=")
                if equals and value and self._secret_query_key(key):
                    value = self._whole(value, "query")
                pairs.append(key + equals + value)
            query = "&".join(pairs)
        return secrets.replace_all(bare + question + query)

    def json(self, value: Any) -> Any:
        """A parsed JSON document, redacted (a new value; the argument is not changed)."""
        if not self.enabled:
            return value
        try:
            # one scan of the document's text: a secret field's name, or any secret in a string, shows there
            if not _scanner(self.fields).suspect(orjson.dumps(value)):
                return value
        except (TypeError, orjson.JSONEncodeError):  # not JSON orjson writes (e.g. a huge int): walk it all
            pass
        return self._json(value)

    def keywords(self, data: bytes) -> list[tuple[int, int]]:
        """Where the keywords that make `json`, `text` and `data` look closer are in `data` (byte offsets):
        any part of `data` that overlaps none comes back from them unchanged."""
        return _scanner(self.fields).keywords(data) if self.enabled else []

    def text(self, text: str) -> str:
        if not self.enabled:
            return text
        return secrets.replace_all(text)

    def data(self, data: bytes) -> bytes:
        """Bytes of unknown shape: as UTF-8 text when they are, else byte for byte (Latin-1), so a key inside
        binary framing is still caught. Bytes without a key-shaped string come back unchanged."""
        if not self.enabled:
            return data
        try:
            return self.text(data.decode()).encode()
        except UnicodeDecodeError:
            return self.text(data.decode("latin-1")).encode("latin-1")

    def _json(self, value: Any) -> Any:
        if isinstance(value, str):
            return secrets.replace_all(value)
        if isinstance(value, list):
            return [self._json(item) for item in value]
        if isinstance(value, dict):
            sampled = "logprob" in value  # {"token": "Hello", "logprob": -0.1}: a sampled token
            return {secrets.replace_all(k): self._field(k, v, sampled) for k, v in value.items()}
        return value

    def _field(self, name: str, value: Any, sampled: bool) -> Any:
        if not self.secret_field(name) or (sampled and name == "token"):
            return self._json(value)
        if isinstance(value, str) and value:
            return self._whole(value, name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._whole(str(value), name)
        return self._json(value)

    def secret_field(self, name: str) -> bool:
        """Whether a JSON field (or query key) of this name holds a secret, whatever its value looks like."""
        key = secrets.field_key(name)
        return key in secrets.SECRET_FIELDS or key in self.fields

    def _secret_query_key(self, key: str) -> bool:
        return key.lower() in secrets.SECRET_QUERY_KEYS or self.secret_field(key)

    @staticmethod
    def _whole(secret: str, name: str) -> str:
        """A value that is secret as a whole: one placeholder, kind from its shape or else from its name."""
        if secrets.PLACEHOLDER.fullmatch(secret):
            return secret
        return secrets.placeholder(secret, secrets.kind_of(secret) or secrets.label(name))


@functools.lru_cache(maxsize=1024)
def _header(name: str, value: str) -> str:
    """A header's value redacted, once per name and value: a recording or a journal repeats the same few (the
    host, the content type, the client's key) on every request."""
    if not secrets.is_secret_header(name):
        return secrets.replace_all(value)
    scheme = _SCHEME.fullmatch(value)
    if scheme:
        return scheme[1] + scheme[2] + Redactor._whole(scheme[3], name)
    return Redactor._whole(value, name)


REDACTOR = Redactor()
"""The built-in rules and no extra fields: what a chain redacts its log lines with unless told otherwise."""


@functools.lru_cache(maxsize=64)
def _scanner(fields: frozenset[str]) -> Scanner:
    """The catalogue, plus the last four letters of each extra field name as a marker: however the name is
    written (``userEmail``, ``USER_EMAIL``), they are there, and tell `json` to walk the document."""
    return Scanner(markers=[field[-4:] for field in fields]) if fields else secrets.DEFAULT
