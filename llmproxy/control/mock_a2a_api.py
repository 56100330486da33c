"""The control API's view of the mock A2A agents (the expectations file's `a2aAgents`, docs/a2a.md): each
agent, where it is served, its card, and what its replies have answered. Agents are added and replaced with the
expectations (`POST /expectations`, `POST /load`)."""

from typing import Any

from llmproxy.control.auth import Access
from llmproxy.control.mock_a2a_models import MockA2aAgent, MockA2aAgents
from llmproxy.control.router import Call, Endpoint
from llmproxy.proxy_session import Session


def mock_a2a_endpoints(session: Session) -> list[Endpoint]:
    """The mock A2A agents' endpoint over `session`, which must be running when it is called."""

    def a2a_agents(call: Call[Any, Any, Any]) -> MockA2aAgents:
        mock = session.mock
        engine = mock.state.value[0] if mock is not None else None  # read: no empty engine put in place
        base_url = session.base_url
        standing = engine.a2a_standing(base_url or "http://127.0.0.1") if engine is not None else []
        return MockA2aAgents(
            agents=[
                MockA2aAgent(
                    name=agent.definition.name,
                    path=agent.definition.served_path,
                    mock_url=base_url + agent.definition.served_path if base_url else None,
                    url=agent.definition.url,
                    card=agent.card,
                    served=list(agent.served.served),
                    tasks=agent.served.tasks,
                )
                for agent in standing
            ]
        )

    return [
        Endpoint(
            "GET",
            "/a2a-agents",
            "The mock A2A agents: where each is served, its agent card, and the messages its replies answered",
            a2a_agents,
            MockA2aAgents,
            Access.READ,
        ),
    ]
