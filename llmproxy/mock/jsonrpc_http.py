"""What the mock's MCP servers and A2A agents share on HTTP: both speak JSON-RPC in POST bodies, answer a
request from elsewhere than their own host or verb with a JSON-RPC error in the body, and tell the log which
server or agent answered, what was asked and what answered it (`Served`)."""

from dataclasses import dataclass
from typing import Final, Literal

import orjson

from llmproxy import jsonrpc
from llmproxy.chain.reply import Reply
from llmproxy.jsonrpc import INVALID_REQUEST, JsonObject

LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
JSON: Final = ("content-type", "application/json")
STREAM: Final = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
_ROLES: Final = {"mcp": "server", "a2a": "agent"}


@dataclass(frozen=True, slots=True)
class Served:
    """A request's answer, and for the log: the server or agent, what was asked, what answered, a miss."""

    protocol: Literal["mcp", "a2a"]
    reply: Reply
    name: str
    said: str  # "tools/call get_forecast", "message/send", "DELETE"
    by: str = ""  # which part of the definition answered: "result 2", "reply 2 (task completed)"
    missed: str | None = None

    @property
    def source(self) -> str:
        """What answered, for the log: `mcp server weather: tools/call get_forecast → result 2`."""
        return f"{self.protocol} {_ROLES[self.protocol]} {self.name}: {self.said}" + (
            f" → {self.by}" if self.by else ""
        )

    @property
    def gist(self) -> JsonObject:
        return {self.protocol: {_ROLES[self.protocol]: self.name, "asked": self.said}}


def refusal(status: int, why: str, code: int = INVALID_REQUEST, allow: str | None = None) -> Reply:
    """An HTTP error whose body is a JSON-RPC error saying `why`; `allow`: the methods a 405 names."""
    headers = (JSON, *((("allow", allow),) if allow is not None else ()))
    return Reply(status, headers, orjson.dumps(jsonrpc.error(None, code, why)))
