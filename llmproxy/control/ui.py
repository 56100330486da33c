"""The dashboard's page on the control port (`/llmproxy/ui/`): its files (plain ES modules and CSS shipped in
the package, `llmproxy/ui/`, no build step) served under a strict Content-Security-Policy, and the way in.

The way in is Jupyter's: the URL llmproxy prints carries `?token=…`; the control port answers it by setting
the token in a cookie (HttpOnly, SameSite=Strict, named after the port: `llmproxy.control.auth`) and sending
the browser on to the same URL without it, so the token sits neither in the history nor in a Referer. What the
page shows it reads from the control API with that cookie; the page itself holds no token.
"""

import mimetypes
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final
from urllib.parse import parse_qsl, urlsplit

from llmproxy.control.auth import Access, Tokens
from llmproxy.intercept.control import Answer

PATH: Final = "/llmproxy/ui"
ASSETS: Final = Path(__file__).resolve().parents[1] / "ui"
COOKIE_PATH: Final = "/llmproxy"  # the page and the API it reads: the cookie goes to nothing else
CSP: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"
)
SECURITY_HEADERS: Final = (
    ("content-security-policy", CSP),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("cache-control", "no-store"),
)
_TYPES: Final = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml"}
_ACCESS_MARK: Final = b"{{access}}"


def serves(target: str) -> bool:
    path = urlsplit(target).path
    return path == PATH or path.startswith(PATH + "/")


def url(origin: str, token: str) -> str:
    """The URL to open: the page, with the token it is entered with."""
    return f"{origin}{PATH}/?token={token}"


def announce(name: str, url: str, no_open: bool, say: Callable[[str], None]) -> None:
    """The dashboard's URL said (`llmproxy NAME: dashboard URL`), and opened in the browser when the process's
    stdout is a terminal and not `no_open` (`--no-open`)."""
    say(f"llmproxy {name}: dashboard {url}")
    if not no_open and sys.__stdout__ is not None and sys.__stdout__.isatty():
        import webbrowser

        webbrowser.open(url)


def entering(target: str, client: str, tokens: Tokens, cookie: str) -> Answer | None:
    """The answer to the page opened with `?token=`: the token put in cookie `cookie` and the browser sent on to
    the URL without it (a wrong token: 401). None when the URL carries no token."""
    parts = urlsplit(target)
    given = dict(parse_qsl(parts.query)).get("token")
    if given is None:
        return None
    if tokens.grant(client, f"Bearer {given}") is None:
        return None
    others = "&".join(f"{name}={value}" for name, value in parse_qsl(parts.query) if name != "token")
    location = _folder(parts.path) + (f"?{others}" if others else "")
    cookie_value = f"{cookie}={given}; Path={COOKIE_PATH}; HttpOnly; SameSite=Strict"
    return Answer(
        303,
        b"",
        (("location", location), ("set-cookie", cookie_value), *SECURITY_HEADERS),
        media_type="text/plain",
    )


def asset(method: str, target: str, granted: Access) -> Answer:
    """A file of the page; the page itself (`index.html`) says whether its token may change the run."""
    if method not in ("GET", "HEAD"):
        return Answer(405, {"error": f"{method} is not supported on {PATH}: use GET"}, (("allow", "GET"),))
    path = urlsplit(target).path
    if path == PATH:  # the page's files are named relative to the folder: it must be asked for as one
        return Answer(303, b"", (("location", _folder(path)), *SECURITY_HEADERS), media_type="text/plain")
    relative = path.removeprefix(PATH).lstrip("/") or "index.html"
    found = (ASSETS / relative).resolve()
    if not found.is_relative_to(ASSETS) or not found.is_file() or found.name.startswith("."):
        return Answer(404, {"error": f"the dashboard has no file {relative}"}, SECURITY_HEADERS)
    data = found.read_bytes()
    if found.name == "index.html":
        data = data.replace(_ACCESS_MARK, granted.value.encode())
    media = _TYPES.get(found.suffix) or mimetypes.guess_type(found.name)[0] or "application/octet-stream"
    return Answer(200, data, SECURITY_HEADERS, media_type=media)


def _folder(path: str) -> str:
    """The page's own URL ends in a slash, so that the files it names relative to it are found."""
    return PATH + "/" if path == PATH else path
