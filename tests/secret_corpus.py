"""Synthetic secrets of every kind llmproxy's catalogue knows, for the redaction tests.

Built at run time from parts and a seeded generator: none is a live key, and the source holds no string a
push-protection scanner would take for one. `SHAPES` are keys recognised by their shape wherever they
appear; `CONTEXTS` are secrets recognised by what precedes them (text to plant, and the secret in it);
`FIELDS`, `HEADERS` and `QUERIES` are values that are secret by the name they are sent under.
"""

import base64
import random
import string

_rng = random.Random(15)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _r(alphabet: str, count: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(count))


def _join(*parts: str) -> str:
    return "".join(parts)


def _pem(label: str) -> str:
    lines = [_r(B64, 64) for _ in range(6)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


# kind (as the placeholder names it) → a key of that shape; a kind may have several shapes (name#n)
SHAPES: dict[str, str] = {
    "sk-ant": _join("sk", "-ant-api03-", _r(ALNUM + "-_", 93), "AA"),
    "openrouter": _join("sk", "-or-v1-", _r(HEX, 64)),
    "sk": _join("sk", "-proj-", _r(ALNUM, 48)),
    "sess": _join("se", "ss-", _r(ALNUM, 40)),
    "google": _join("AI", "za", _r(ALNUM + "-_", 35)),
    "google-oauth": _join("ya", "29.", _r(ALNUM + "-_", 60)),
    "google-refresh": _join("1/", "/0", _r(ALNUM + "-_", 60)),
    "huggingface": _join("h", "f_", _r(string.ascii_letters, 34)),
    "perplexity": _join("pp", "lx-", _r(ALNUM, 48)),
    "groq": _join("gs", "k_", _r(ALNUM, 52)),
    "xai": _join("xa", "i-", _r(ALNUM, 80)),
    "replicate": _join("r", "8_", _r(ALNUM, 37)),
    "aws-key-id": _join("AK", "IA", _r(string.ascii_uppercase + string.digits, 16)),
    "azure-ad-client-secret": _join(_r(ALNUM, 3), "8", "Q~", _r(ALNUM + "_~.-", 34)),
    "databricks": _join("da", "pi", _r(HEX, 32)),
    "digitalocean": _join("do", "p_v1_", _r(HEX, 64)),
    "vault": _join("hv", "s.", _r(ALNUM, 90)),
    "doppler": _join("dp", ".pt.", _r(ALNUM, 43)),
    "pulumi": _join("pu", "l-", _r(HEX, 40)),
    "planetscale": _join("psc", "ale_tkn_", _r(ALNUM, 43)),
    "github": _join("gh", "p_", _r(ALNUM, 36)),
    "github#2": _join("git", "hub_pat_", _r(ALNUM, 22), "_", _r(ALNUM, 59)),
    "gitlab": _join("gl", "pat-", _r(ALNUM + "-_", 20)),
    "npm": _join("np", "m_", _r(ALNUM, 36)),
    "pypi": _join("py", "pi-AgEIcHlwaS5vcmc", _r(ALNUM + "-_", 70)),
    "rubygems": _join("ruby", "gems_", _r(HEX, 48)),
    "atlassian": _join("ATA", "TT3", _r(ALNUM + "-_", 186)),
    "linear": _join("lin", "_api_", _r(ALNUM, 40)),
    "sentry": _join("sntr", "ys_", _r(B64, 80)),
    "grafana": _join("gl", "sa_", _r(ALNUM, 32), "_", _r(HEX, 8)),
    "postman": _join("PM", "AK-", _r(HEX, 24), "-", _r(HEX, 34)),
    "slack": _join("xo", "xb-", _r(string.digits, 12), "-", _r(string.digits, 12), "-", _r(ALNUM, 24)),
    "slack#2": _join("xo", "xp-", _r(string.digits, 12), "-", _r(string.digits, 12), "-", _r(ALNUM, 32)),
    "stripe": _join("s", "k_live_", _r(ALNUM, 40)),
    "stripe#2": _join("r", "k_live_", _r(ALNUM, 40)),
    "stripe-webhook": _join("wh", "sec_", _r(ALNUM, 32)),
    "twilio": _join("S", "K", _r(HEX, 32)),
    "sendgrid": _join("S", "G.", _r(ALNUM, 22), ".", _r(ALNUM, 43)),
    "shopify": _join("sh", "pat_", _r(HEX, 32)),
    "notion": _join("nt", "n_", _r(string.digits, 11), _r(ALNUM, 35)),
    "openssh-private-key": _pem(_join("OPENSSH PRIV", "ATE KEY")),
    "private-key": _pem(_join("RSA PRIV", "ATE KEY")),
    "age-secret-key": _join("AGE-SEC", "RET-KEY-1", _r(string.ascii_uppercase + string.digits, 58)),
    "jwt": _join("ey", "J", _r(ALNUM, 20), ".ey", "J", _r(ALNUM, 30), ".", _r(ALNUM + "-_", 43)),
}

_AWS_SECRET = _r(ALNUM + "/+", 40)
_PASSWORD = _r(ALNUM, 14) + "7"
# kind → (text holding the secret, the secret)
CONTEXTS: dict[str, tuple[str, str]] = {
    "bearer": (f"curl -H 'Authorization: Bearer {(t := _r(ALNUM, 30) + '42')}'", t),
    "basic": (f"Authorization: Basic {(b := base64.b64encode(b'deploy:' + _r(ALNUM, 16).encode()).decode())}", b),
    "url-password": (f"git clone https://deploy:{(p := _r(ALNUM, 20))}@git.example.invalid/repo.git", p),
    "cookie": (f"Cookie: session={(c := _r(ALNUM, 32))}; theme=dark", f"session={c}; theme=dark"),
    "aws-secret": (f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET),
    "azure-storage-key": (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={(k := _r(B64, 86) + '==')};EndpointSuffix=x",
        k,
    ),
    "azure-connection-string": (
        f"Endpoint=sb://ns.example.invalid/;SharedAccessKeyName=Root;SharedAccessKey={(s := _r(B64, 43) + '=')}",
        s,
    ),
    "query": (f"fetch https://maps.example.invalid/api?key={(q := _r(ALNUM, 24))}&units=metric", q),
    "password": (f"DB_PASSWORD={_PASSWORD}", _PASSWORD),
    "client-secret": (f'{{"client_secret": "{(cs := _r(ALNUM, 24))}"}}', cs),
}

# JSON fields secret by name (nested ones too), with values of no known shape
FIELDS: dict[str, object] = {
    "token": _r(ALNUM, 28),
    "private_key": _r(ALNUM, 30),
    "password": _r(ALNUM, 12),
    "client_secret": _r(ALNUM, 26),
    "refresh_token": _r(ALNUM, 40),
    "config": {"nested": {"api_key": _r(ALNUM, 32)}},
}
# request headers secret by name
HEADERS: dict[str, str] = {
    "x-auth-token": _r(ALNUM, 24),
    "x-client-secret": _r(ALNUM, 24),
    "private-token": _r(ALNUM, 20),
}
# query keys secret by name
QUERIES: dict[str, str] = {
    "access_token": _r(ALNUM, 30),
    "api_key": _r(ALNUM, 30),
    "sig": _r(ALNUM, 30),
}


def field_values(value: object = FIELDS, name: str = "") -> dict[str, str]:
    """The secret values of `FIELDS` by their dotted path."""
    if isinstance(value, dict):
        return {
            path: found for key, item in value.items() for path, found in field_values(item, f"{name}.{key}").items()
        }
    return {name.lstrip("."): value} if isinstance(value, str) else {}


def planted_text() -> str:
    """One text holding every shape and every context, for bodies and streams."""
    lines = [f"{kind.split('#')[0]}: {key}" for kind, key in SHAPES.items()]
    lines += [text for text, _ in CONTEXTS.values()]
    return "\n".join(lines)


def all_secrets() -> dict[str, str]:
    """Every planted secret by a name for reports: the corpus."""
    found = {f"shape {kind}": key for kind, key in SHAPES.items()}
    found |= {f"context {kind}": secret for kind, (_, secret) in CONTEXTS.items()}
    found |= {f"field {path}": value for path, value in field_values().items()}
    found |= {f"header {name}": value for name, value in HEADERS.items()}
    found |= {f"query {name}": value for name, value in QUERIES.items()}
    return found
