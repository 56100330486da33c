"""Where a running session listens, whichever door serves it."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Listener:
    spec: str  # the mitmproxy mode it serves ("lean": the lean door)
    url: str  # where clients connect: the proxy URL, or a base URL in reverse mode
    target: str | None  # the upstream of a reverse listener
