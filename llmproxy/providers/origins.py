"""Where a request to llmproxy's own base URL goes: the provider's public API, told by the request's route.

A client set by base URL (`ANTHROPIC_BASE_URL=$LLMPROXY_BASE_URL`) names no host, only a path; recorded and
replayed through that base URL, its exchanges carry the URL they would have had through the proxy, so one
cassette serves both ways in. APIs with no public host of their own (Azure resources, Bedrock regions, a
gateway) need a listener of their own: `--reverse URL`.
"""

import re
from typing import Final

from llmproxy.model import Provider, Route

ORIGINS: Final[dict[Provider, str]] = {
    Provider.ANTHROPIC: "https://api.anthropic.com",
    Provider.OPENAI: "https://api.openai.com",
    Provider.GEMINI: "https://generativelanguage.googleapis.com",
    Provider.GEMINI_CODE_ASSIST: "https://cloudcode-pa.googleapis.com",
    Provider.COHERE: "https://api.cohere.com",
    Provider.VOYAGE: "https://api.voyageai.com",
    Provider.OLLAMA: "http://localhost:11434",
}
_CODEX_BACKEND: Final = "https://chatgpt.com"  # ChatGPT-login Codex: /backend-api/codex/responses
_VERTEX_LOCATION: Final = re.compile(r"^/v1[a-z0-9]*/projects/[^/]+/locations/(?P<location>[a-z0-9-]+)/")


def origin_for(route: Route, path: str) -> str | None:
    """The origin (scheme://host[:port]) that serves `route` at `path`, or None when it has no public one."""
    if route.provider is Provider.OPENAI and path.startswith("/backend-api/"):
        return _CODEX_BACKEND
    if route.provider is Provider.GEMINI and (vertex := _VERTEX_LOCATION.match(path)):
        location = vertex["location"]
        return (
            "https://aiplatform.googleapis.com"
            if location == "global"
            else f"https://{location}-aiplatform.googleapis.com"
        )
    return ORIGINS.get(route.provider)
