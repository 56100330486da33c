"""mitmproxy's `ctx` for each proxy thread, so that several proxies can run in one process.

`mitmproxy.ctx` is a plain module whose `master`, `options` and `log` every `Master()` overwrites, and mitmproxy
builds the handler of each new client connection from `ctx.master` and `ctx.options`. With two proxies in one
process — the pytest plugin's beside a test's own session, two sessions of the Python API — the proxy built last
would serve the other's connections with its own addons and answer chain, and once stopped leave the other
serving through a master whose loop is gone (a connection that hangs). Each llmproxy proxy builds its master on a
thread of its own, so the values become per-thread: a thread sees what a `Master()` built on it set, and any other
thread what was set last, as before.
"""

import threading
import types
from typing import Any

from mitmproxy import ctx

_NAMES = ("master", "options", "log")
_local = threading.local()  # what a Master() built on this thread set
_last: dict[str, Any] = {}  # what was set last, on any thread


class _PerThread(types.ModuleType):
    pass


def _attribute(name: str) -> property:
    def get(module: _PerThread) -> Any:
        try:
            return getattr(_local, name)
        except AttributeError:
            pass
        try:
            return _last[name]
        except KeyError:
            raise AttributeError(f"module 'mitmproxy.ctx' has no attribute {name!r}") from None

    def set_(module: _PerThread, value: Any) -> None:
        setattr(_local, name, value)
        _last[name] = value

    return property(get, set_)


for _name in _NAMES:
    setattr(_PerThread, _name, _attribute(_name))


def install() -> None:
    """Make `mitmproxy.ctx` per-thread (once; what it holds already stays the process-wide value)."""
    if isinstance(ctx, _PerThread):
        return
    for name in _NAMES:
        if name in ctx.__dict__:
            _last[name] = ctx.__dict__.pop(name)
    ctx.__class__ = _PerThread
