"""Where traffic is sent when the user says so: `--map HOST=URL` and `--reverse URL`, checked when the
command line is read — a bad value is a usage error before anything starts or any file is touched."""

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from llmproxy.errors import UsageError
from llmproxy.http import DEFAULT_PORTS


@dataclass(frozen=True, slots=True)
class Destination:
    scheme: str
    host: str
    port: int
    path_prefix: str  # prepended to the request path ("" for none)

    @classmethod
    def parse(cls, url: str, option: str = "--map") -> "Destination":
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"{option}: expected an http(s) URL such as http://127.0.0.1:8000, got {url!r}")
        no_port = UsageError(f"{option}: {url!r} has no valid port (a number from 1 to 65535)")
        if parts.netloc.endswith(":"):  # `http://127.0.0.1:` (a variable left unset), not the scheme's default
            raise no_port
        try:
            port = parts.port if parts.port is not None else DEFAULT_PORTS[parts.scheme]
        except ValueError:
            raise no_port from None
        if port == 0:
            raise no_port
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def parse_map(entries: Sequence[str]) -> dict[str, str]:
    """``HOST=URL`` entries (`--map`) by lower-case host, each URL checked."""
    mapping: dict[str, str] = {}
    for entry in entries:
        host, equals, url = entry.partition("=")
        if not equals or not host.strip() or not url.strip():
            raise UsageError(f"--map expects HOST=URL, got {entry!r}")
        Destination.parse(url.strip())
        mapping[host.strip().lower()] = url.strip()
    return mapping


def check_reverse(targets: Sequence[str]) -> tuple[str, ...]:
    """`--reverse` URLs, each checked."""
    for target in targets:
        Destination.parse(target, "--reverse")
    return tuple(targets)
