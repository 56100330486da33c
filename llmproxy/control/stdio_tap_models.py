"""What `llmproxy mcp-tap` and a run's control API say to each other: a tap inside `llmproxy record` hands
each exchange of its stdio MCP server to the run's recording, and a tap inside `llmproxy replay` asks the run's
replay for the answer (docs/mcp.md), so that the run keeps one cassette and one account of what it served."""

from datetime import datetime
from typing import Any

from pydantic import Field

from llmproxy.control.models import ApiModel


class StdioLine(ApiModel):
    t_ms: float = Field(description="when the server wrote it, in ms after the request")
    message: Any = Field(description="the JSON-RPC message it wrote")


class StdioExchange(ApiModel):
    server: str = Field(description="the name the tap records the server under (the URL's host: stdio://NAME/)")
    request: Any = Field(description="the JSON-RPC request the client wrote")
    written: list[StdioLine] = Field(description="what the server wrote until it answered, the answer last")
    started_at: datetime
    total_ms: float


class StdioRecorded(ApiModel):
    recording: str = Field(description="the cassette the exchange is recorded into")


class StdioRequest(ApiModel):
    server: str
    request: Any = Field(description="the JSON-RPC request the client wrote")
    records_misses: bool = Field(
        False,
        description="the tap records what the replay lacks (new_episodes): such a request is not a miss of the run's",
    )


class StdioAnswer(ApiModel):
    written: list[Any] | None = Field(
        None,
        description="what the server wrote for the same request when recorded, the answer last (its id "
        "the recording's: the tap gives it the request's)",
    )
    miss: str | None = Field(None, description="why nothing recorded answers it, when nothing does")
