"""The secret catalogue: every kind of secret llmproxy knows, in one place. The redactor, `cassette check`,
the log filter and everything printed use these rules and nothing else, so they agree by construction.

A rule is a shape found in text: its `kind` (the placeholder's label), the `keywords` one of which every
match contains (lower case, three characters at least; found case-insensitively by a multi-pattern scan,
as gitleaks does, so text holding none of them costs one pass), where the match starts relative to a
keyword (`back` characters before it), and the regular expression that confirms it there. A group named
``s`` marks the secret when the match also holds a context worth keeping (``Bearer ``, ``password=``;
``s2``, ``s3`` for alternatives); otherwise the whole match is. A group named ``n`` names the kind (a field
name: ``password``, ``token``). The shapes follow the public rule sets of gitleaks and trufflehog, checked
against the providers' formats.

Besides shapes in text: header names whose values are secret whatever they look like, query keys, and
JSON field names (compared without case, ``_`` or ``-``).
"""

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

# Not inside a word: no letter or digit just before, unless it ends a JSON escape such as ``\n``.
_B = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
_TOKEN = r"[A-Za-z0-9_\-\.=:/+~]"


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    keywords: tuple[str, ...]
    pattern: str
    back: int = 0  # the match starts this many characters before the keyword
    verify: Callable[[str], bool] | None = None  # a last check of the secret a pattern cannot express

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    if pattern not in _CACHE:
        _CACHE[pattern] = re.compile(pattern)
    return _CACHE[pattern]


def _basic_credentials(secret: str) -> bool:
    """`Basic X` is HTTP basic auth only when X is base64 of ``user:password`` (not an English word)."""
    try:
        return b":" in base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


def _pem(label: str) -> str:
    """A PEM block from its BEGIN line to its END line, or to where its base64 stops (a key cut short, or
    split across stream events, is still a key). Newlines may be real or JSON escapes."""
    body = r"(?:[A-Za-z0-9+/=\s:,.]|\\[nr]|-(?!----))*"
    return rf"-----BEGIN {label}-----{body}(?:-----END {label}-----)?"


# Field names whose values are secrets, as they end: ``client_secret``, ``DB_PASSWORD``, ``x-auth-token``.
FIELD_WORDS = r"(?P<n>(?i:password|passwd|secret|token|api[_-]?key|private[_-]?key)(?i:[_-]?access)?(?i:[_-]?key)?)"
# After a field name: an optional closing quote (escaped inside JSON text), then ``:`` or ``=``; the value
# quoted (anything), or bare with a digit in it (so ``password: str`` in code is not taken for a secret).
_VALUE = (
    r"(?:\\?[\"'])?\s*[:=]\s*"
    r"(?:\\?\"(?!<redacted:)(?P<s>[^\"\\\n]+)|'(?!<redacted:)(?P<s2>[^'\\\n]+)"
    r"|(?!<redacted:)(?P<s3>(?=[^\s\"'&,;<>(){}\[\]\\]*\d)[^\s\"'&,;<>(){}\[\]\\]{6,}))"
)

RULES: tuple[Rule, ...] = (
    # AI providers
    Rule("sk-ant", ("sk-",), r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    Rule("openrouter", ("sk-",), r"sk-or-v1-[0-9a-f]{64}"),
    Rule("sk", ("sk-",), _B + r"sk-[A-Za-z0-9_\-]{20,}"),
    Rule("sess", ("sess-",), _B + r"sess-[A-Za-z0-9]{20,}"),
    Rule("google", ("aiza",), r"AIza[0-9A-Za-z_\-]{35,}"),
    Rule("google-oauth", ("ya29.",), r"ya29\.[0-9A-Za-z_\-]{20,}"),
    Rule("google-refresh", ("1//",), _B + r"1//[0-9A-Za-z_\-]{20,}"),
    Rule("huggingface", ("hf_",), _B + r"hf_[A-Za-z0-9]{30,}"),
    Rule("perplexity", ("pplx-",), _B + r"pplx-[A-Za-z0-9]{40,}"),
    Rule("groq", ("gsk_",), _B + r"gsk_[A-Za-z0-9]{40,}"),
    Rule("xai", ("xai-",), _B + r"xai-[A-Za-z0-9]{40,}"),
    Rule("replicate", ("r8_",), _B + r"r8_[A-Za-z0-9]{30,}"),
    # clouds
    Rule("aws-key-id", ("akia", "asia"), _B + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"),
    Rule(
        "aws-secret",
        ("secret",),
        r"(?i:secret_?access_?key)[\"']?\s*[:=]\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    Rule("azure-storage-key", ("key=",), r"(?i:accountkey)=(?P<s>[A-Za-z0-9+/]{20,}={0,2})", back=7),
    Rule("azure-connection-string", ("key=",), r"(?i:sharedaccesskey)=(?P<s>[A-Za-z0-9+/]{20,}={0,2})", back=12),
    Rule(
        "azure-ad-client-secret",
        tuple(f"{digit}q~" for digit in range(10)),
        r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}",
        back=3,
    ),
    Rule("databricks", ("dapi",), _B + r"dapi[0-9a-f]{32}(?:-\d)?"),
    Rule("digitalocean", ("_v1_",), _B + r"do[opr]_v1_[0-9a-f]{64}", back=3),
    Rule("vault", ("hvs.", "hvb."), _B + r"hv[sb]\.[A-Za-z0-9_\-]{24,}"),
    Rule("doppler", ("dp.pt.",), r"dp\.pt\.[A-Za-z0-9]{40,}"),
    Rule("pulumi", ("pul-",), _B + r"pul-[0-9a-f]{40}"),
    Rule("planetscale", ("pscale_",), r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}"),
    # code hosting and packages
    Rule("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{36,}"),
    Rule("github", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{22,}"),
    Rule("gitlab", ("glpat-", "glrt-"), r"gl(?:pat|rt)-[0-9A-Za-z_\-]{20,}"),
    Rule("npm", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}"),
    Rule("pypi", ("pypi-ag",), r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    Rule("rubygems", ("rubygems_",), r"rubygems_[0-9a-f]{48}"),
    Rule("atlassian", ("atatt3",), r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    Rule("linear", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}"),
    Rule("sentry", ("sntry",), r"sntr[yu][su]_[A-Za-z0-9+/=_]{40,}"),
    Rule("grafana", ("glc_", "glsa_"), _B + r"(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})"),
    Rule("postman", ("pmak-",), r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    # messaging and payments
    Rule("slack", ("xox",), r"xox[abposre]-[0-9A-Za-z\-]{10,}"),
    Rule(
        "slack-webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?P<s>(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,})",
    ),
    Rule("stripe", ("sk_", "rk_"), _B + r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}"),
    Rule("stripe-webhook", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{24,}"),
    Rule("twilio", tuple(f"sk{h}" for h in "0123456789abcdef"), _B + r"SK[0-9a-fA-F]{32}(?![0-9A-Za-z])"),
    Rule("sendgrid", ("sg.",), r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    Rule("shopify", ("shp",), r"shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}"),
    Rule("notion", ("ntn_",), _B + r"ntn_[0-9]{11}[A-Za-z0-9]{35}"),
    # keys and tokens of any issuer
    Rule("openssh-private-key", ("-----begin",), _pem("OPENSSH PRIVATE KEY")),
    Rule("private-key", ("-----begin",), _pem(r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?")),
    Rule("age-secret-key", ("secret",), r"AGE-SECRET-KEY-1[0-9A-Z]{58}", back=4),
    Rule("jwt", ("eyj",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    # secrets known by what precedes them: the context is kept, the secret replaced
    Rule("bearer", ("bearer",), rf"(?i:bearer)\s+(?P<s>(?={_TOKEN}*\d){_TOKEN}{{16,}})"),
    Rule(
        "basic",
        ("basic ",),
        r"(?i:basic) +(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        verify=_basic_credentials,
    ),
    Rule("url-password", ("://",), r"://[^/\s:@\"'<>\\]{1,256}:(?P<s>[^/\s@\"'<>\\]{1,256})@"),
    Rule("cookie", ("cookie:",), r"(?i:(?:set-)?cookie):[ \t]*(?P<s>[^\s\\][^\r\n\\]*)"),
    Rule("query", ("key=", "sig=", "code="), r"(?<=[?&;])(?:key|sig|code)=(?P<s>(?!<redacted:)[^&\s\"'#<>\\]{4,})"),
    Rule(  # ?access_token=…, &client_secret=…: any value, as a URL's query carries it
        "query",
        ("token", "secret", "password", "api_key", "apikey"),
        r"(?:(?<=[?&;])|(?<=[?&;]access_)|(?<=[?&;]refresh_)|(?<=[?&;]id_)|(?<=[?&;]client_)|(?<=[?&;]auth_))"
        r"(?i:token|secret|password|api_?key)=(?P<s>[^&\s\"'#<>\\]+)",
    ),
    Rule(
        "field",
        ("password", "passwd", "secret", "token", "api_key", "apikey", "api-key", "private"),
        FIELD_WORDS + _VALUE,
    ),
)

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-functions-key",
        "ocp-apim-subscription-key",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
        "openai-organization",
        "openai-project",
        "chatgpt-account-id",
        "anthropic-organization-id",
        "x-goog-user-project",
        "private-token",
    }
)
# any header with one of these words in its name (split at "-" and "_"): x-auth-token, x-client-secret…
SECRET_HEADER_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "apikey", "auth", "credential", "credentials", "signature", "cookie"}
)
SECRET_QUERY_KEYS = frozenset(
    {
        "key",
        "sig",
        "signature",
        "code",
        "auth",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
    }
)
# JSON fields (and query keys) whose values are secrets whatever they look like, as `field_key` spells them.
# Each ends with a word of FIELD_WORDS, so the text scan that decides whether a body needs walking sees them.
SECRET_FIELDS = frozenset(
    {
        "apikey",
        "xapikey",
        "token",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "authtoken",
        "apitoken",
        "sessiontoken",
        "awssessiontoken",
        "securitytoken",
        "bearertoken",
        "secret",
        "clientsecret",
        "apisecret",
        "secretkey",
        "secretaccesskey",
        "awssecretaccesskey",
        "password",
        "passwd",
        "privatekey",
    }
)
