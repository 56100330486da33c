"""Routes the user declares (`--route HOST=CODEC`, `routes=` in the Python API): a private gateway whose paths
llmproxy cannot know, or a compatible vendor's host missing from the built-in table.

``HOST[:PORT][/PATH]=TARGET``: requests to HOST (on PORT, under PATH, when given) are TARGET, which is

* a codec name (``openai-chat``, ``anthropic-messages``… — `registry.CHAT_CODECS` and the embedding and
  rerank codecs): every request there speaks that API, whatever its path; ``CODEC@VENDOR`` also names who
  serves it, for reports and prices;
* a vendor name (``deepseek``, or any name of your own): the host serves the usual API paths, recognised with
  or without `/v1` as for the built-in compatible hosts, and cassettes and reports name that vendor.

Declarations hold for the process while a session runs (`declared`); detection reads them first.
"""

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from llmproxy.errors import UsageError
from llmproxy.model import Operation, Provider

_VENDOR_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True, slots=True)
class Declaration:
    host: str
    port: int | None = None
    path: str = ""  # a path prefix, "" for every path
    codec: str | None = None  # every request there speaks this codec's API
    api: tuple[Provider, Operation] | None = None  # the codec's
    vendor: str | None = None

    def covers(self, host: str, port: int | None, path: str) -> bool:
        if host != self.host or (self.port is not None and port != self.port):
            return False
        return not self.path or path == self.path or path.startswith(self.path + "/")

    def __str__(self) -> str:
        where = self.host + (f":{self.port}" if self.port is not None else "") + self.path
        target = self.vendor if self.codec is None else self.codec + (f"@{self.vendor}" if self.vendor else "")
        return f"{where}={target}"


def parse(spec: str) -> Declaration:
    """One ``HOST[:PORT][/PATH]=CODEC[@VENDOR]|VENDOR``; raises UsageError saying what is wrong."""
    where, equals, target = spec.partition("=")
    where, target = where.strip(), target.strip().lower()
    if not equals or not where or not target:
        raise UsageError(f"--route expects HOST=CODEC or HOST=VENDOR, got {spec!r}")
    try:
        url = urlsplit(where if "://" in where else f"//{where}")
        host, port = url.hostname, url.port
    except ValueError as error:
        raise UsageError(f"--route {spec!r}: {error}") from None
    if not host:
        raise UsageError(f"--route {spec!r}: no host")
    codec, at, vendor = target.partition("@")
    if at and not vendor:
        raise UsageError(f"--route {spec!r}: no vendor after '@'")
    api = _api(codec)
    if api is None:
        if at:
            raise UsageError(f"--route {spec!r}: {codec!r} is not a codec ({_codecs_hint()})")
        codec, vendor = "", target
    if vendor and not _VENDOR_NAME.match(vendor):
        raise UsageError(f"--route {spec!r}: {vendor!r} is neither a codec ({_codecs_hint()}) nor a vendor name")
    return Declaration(host.rstrip("."), port, url.path.rstrip("/"), codec or None, api, vendor or None)


def parse_all(specs: Iterable[str]) -> tuple[Declaration, ...]:
    return tuple(parse(spec) for spec in specs)


_current: tuple[Declaration, ...] = ()
_forgetters: list[Callable[[], None]] = []


def current() -> tuple[Declaration, ...]:
    return _current


@contextlib.contextmanager
def declared(declarations: Iterable[Declaration]) -> Iterator[None]:
    """Detection knows these routes inside the block (and those declared around it)."""
    global _current
    previous = _current
    _set((*previous, *declarations))
    try:
        yield
    finally:
        _set(previous)


def when_changed(forget: Callable[[], None]) -> None:
    """Call `forget` each time the declarations change. Detection (`routes.py`) reads them and caches what it
    found: it hands its `forget` in here, so that this module need not import detection back."""
    _forgetters.append(forget)


def _set(declarations: tuple[Declaration, ...]) -> None:
    global _current
    _current = declarations
    for forget in _forgetters:
        forget()


def _api(name: str) -> tuple[Provider, Operation] | None:
    from llmproxy.providers.registry import named_codec  # the registry imports every codec: only when asked

    codec = named_codec(name)
    return None if codec is None else (codec.provider, codec.operation)


def _codecs_hint() -> str:
    from llmproxy.providers.registry import codec_names

    return "one of " + ", ".join(codec_names())
