"""mitmproxy's options, with plain values read from a dictionary instead of deep-copied on every read.

`OptManager.__getattr__` deep-copies an option's value (after deep-copying its default) on each read, and
mitmproxy's HTTP layer reads about eight options a request (body size limits, `stream_large_bodies`,
`validate_inbound_headers`, the TLS addon's per-request checks): a few percent of a replayed request's CPU.
A str, number, bool or None cannot be changed in place, so a read of one is kept with the very value it came
from and serves every later read while the option still holds that value: setting, resetting or rolling
back an option gives it another, and the next read copies afresh. Lists (modes, hosts) are always copied.
"""

from typing import Any

from llmproxy_addons.lean_mitmproxy import options

_SHAREABLE = frozenset({str, int, float, bool, type(None)})


class SettledOptions(options.Options):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.__dict__["_read"] = {}

    def __getattr__(self, attr: str) -> Any:
        read: dict[str, tuple[object, Any]] | None = self.__dict__.get("_read")
        option = self.__dict__["_options"].get(attr) if read is not None else None
        if option is None:  # still being built, or no such option: mitmproxy's own answer
            return super().__getattr__(attr)
        assert read is not None
        kept = read.get(attr)
        if kept is not None and kept[0] is option.value:
            return kept[1]
        value = super().__getattr__(attr)
        if type(value) in _SHAREABLE:
            read[attr] = (option.value, value)
        return value
