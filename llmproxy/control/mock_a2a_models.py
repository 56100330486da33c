"""The JSON of the mock A2A agents' endpoint (`llmproxy.control.mock_a2a_api`): each agent the mock serves,
where, its agent card as a client reads it, and what its replies have answered."""

from typing import Any

from pydantic import Field

from llmproxy.control.models import ApiModel


class MockA2aAgent(ApiModel):
    name: str = Field(description="its name in the expectations file")
    path: str = Field(description="its JSON-RPC endpoint on the mock's base URL")
    mock_url: str | None = Field(None, description="that endpoint's URL on the mock's base URL, when the run has one")
    url: str | None = Field(None, description="the real agent's URL it answers for through the proxy")
    card: dict[str, Any] = Field(description="its agent card, as read on the mock's base URL")
    served: list[int] = Field(description="messages each of its replies (in the file's order) answered so far")
    tasks: int = Field(description="tasks it has opened so far")


class MockA2aAgents(ApiModel):
    agents: list[MockA2aAgent] = Field(description="in the order they were added; an agent replaced keeps its place")
