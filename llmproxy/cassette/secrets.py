"""What a secret looks like: key-shaped strings, secret headers and query keys, and the placeholders that
replace them. Shared by the redactor (which replaces) and `cassette check` (which only reports).

A placeholder is ``<redacted:KIND:HASH>``: KIND a short, non-secret label (``sk-ant``, ``jwt``, a header
name), HASH the first 8 hex digits of the secret's SHA-256. The same secret always gives the same
placeholder, in every file and run, so replay can match on the redacted form; 32 bits of a hash reveal
nothing usable about a high-entropy key. No pattern below matches a placeholder, so redacting twice
changes nothing.
"""

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"<redacted:[a-z0-9\-]{1,32}:[0-9a-f]{8}>")

# (kind, pattern): distinctive prefixes match anywhere; generic ones must not follow a letter or digit
# (``task-…`` is not an OpenAI key) unless that letter ends a JSON escape such as ``\n``.
_NOT_IN_WORD = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
KEY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("sk-ant", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("sk", _NOT_IN_WORD + r"sk-[A-Za-z0-9_\-]{20,}"),
    ("sess", _NOT_IN_WORD + r"sess-[A-Za-z0-9]{20,}"),
    ("google", r"AIza[0-9A-Za-z_\-]{35,}"),
    ("google-oauth", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    ("aws-key-id", _NOT_IN_WORD + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    ("github", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
)
# secrets recognised by what precedes them; the prefix is kept, the token replaced
_TOKEN = r"[A-Za-z0-9_\-\.=:/+~]"
CONTEXT_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("bearer", r"\b(?i:bearer)\s+", rf"(?={_TOKEN}*\d){_TOKEN}{{16,}}"),
    (
        "aws-secret",
        r"(?i:aws_secret_access_key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?",
        r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
)

# Every pattern above contains one of these literals, and JSON escaping never splits printable ASCII, so
# a JSON document whose text holds none of them holds no key-shaped string anywhere (one scan, not one per string).
_TRIGGERS = re.compile(r"sk-|sess-|AIza|ya29\.|AKIA|ASIA|gh[pousr]_|github_pat_|eyJ|(?i:bearer|secret)")

_NAMES = [f"k{i}" for i in range(len(KEY_PATTERNS))]
_ANY = re.compile(
    "|".join(f"(?P<{name}>{pattern})" for name, (_, pattern) in zip(_NAMES, KEY_PATTERNS, strict=True))
    + "|"
    + "|".join(f"(?P<p{i}>{prefix})(?P<t{i}>{token})" for i, (_, prefix, token) in enumerate(CONTEXT_PATTERNS))
)
_KIND_OF_GROUP = {name: kind for name, (kind, _) in zip(_NAMES, KEY_PATTERNS, strict=True)}
_FULL = [(kind, re.compile(pattern)) for kind, pattern in KEY_PATTERNS]

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
        "openai-organization",
        "openai-project",
        "chatgpt-account-id",
        "anthropic-organization-id",
        "x-goog-user-project",
    }
)
SECRET_QUERY_KEYS = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "sig",
        "signature",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "client_secret",
        "password",
        "code",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
    }
)
# JSON fields whose string values are secrets whatever they look like (compared without case, "_", "-")
SECRET_FIELDS = frozenset(
    {
        "apikey",
        "secretaccesskey",
        "awssecretaccesskey",
        "sessiontoken",
        "awssessiontoken",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "clientsecret",
        "password",
    }
)


def field_key(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def label(name: str) -> str:
    """A placeholder kind from a header or field name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "secret"


def kind_of(secret: str) -> str | None:
    """The kind of key a whole string is, if it is one."""
    return next((kind for kind, pattern in _FULL if pattern.fullmatch(secret)), None)


def may_contain(text: str) -> bool:
    """False when `text` (or the JSON text of a document) certainly holds no key-shaped string."""
    return _TRIGGERS.search(text) is not None


def placeholder(secret: str, kind: str) -> str:
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"<redacted:{kind}:{digest}>"


@dataclass(frozen=True, slots=True)
class Found:
    kind: str
    start: int  # of the secret itself (a kept prefix such as "Bearer " excluded)
    end: int
    secret: str


def find(text: str) -> Iterator[Found]:
    """Every key-shaped string in `text`, left to right, without overlaps."""
    for match in _ANY.finditer(text):
        group = match.lastgroup or ""
        if group.startswith("t"):  # a context pattern: the token after its prefix
            index = int(group[1:])
            token = match.group(group)
            yield Found(kind_of(token) or CONTEXT_PATTERNS[index][0], match.start(group), match.end(), token)
        else:
            yield Found(_KIND_OF_GROUP[group], match.start(), match.end(), match.group())


def replace_all(text: str) -> str:
    """`text` with every key-shaped string replaced by its placeholder."""
    if not text:
        return text
    parts: list[str] = []
    last = 0
    for found in find(text):
        parts.append(text[last : found.start])
        parts.append(placeholder(found.secret, found.kind))
        last = found.end
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def mask(secret: str) -> str:
    """A secret shown in a report without revealing it: at most 6 characters, at most a third of it."""
    return f"{secret[: min(6, len(secret) // 3)]}…({len(secret)} chars)"
