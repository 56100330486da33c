"""The mock's A2A agents driven by the official `a2a-sdk` client, as an agent's A2A client would: its 1.0
JSON-RPC transport over JSON and server-sent events, its 0.3 transport, at the agent's path on the mock's base
URL and under the real agent's URL through the proxy. Every promise docs/a2a.md makes of its worked example
holds; the errors are the A2A specification's; the control API lists the agents and reset removes them."""

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.compat.v0_3.jsonrpc_transport import CompatJsonRpcTransport
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    InternalError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf import json_format

from llmproxy.intercept.options import intercept_plan
from llmproxy.session import Listening, Session, mocking
from tests.control.test_api import call
from tests.mock.a2a.worked import PYTHON, WORKED, write_worked


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    folder = tmp_path_factory.mktemp("a2a")
    with mocking(write_worked(folder), Listening(ca_directory=folder / "ca")) as session:
        yield session


def card_of(url: str) -> AgentCard:
    async def run() -> AgentCard:
        async with httpx.AsyncClient(trust_env=False) as http:
            return await A2ACardResolver(http, url).get_agent_card()

    return asyncio.run(run())


def connected[T](
    url: str, use: Callable[[Client], Awaitable[T]], http: httpx.AsyncClient | None = None, **config: Any
) -> T:
    async def run() -> T:
        async with http or httpx.AsyncClient(trust_env=False) as client_http:
            client = await ClientFactory(ClientConfig(httpx_client=client_http, **config)).create_from_url(url)
            return await use(client)

    return asyncio.run(run())


def said(text: str, task_id: str = "") -> SendMessageRequest:
    message = Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)], task_id=task_id)
    return SendMessageRequest(message=message)


async def events(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return [event async for event in client.send_message(request)]


async def sent(client: Client, text: str, task_id: str = "") -> Task:
    (event,) = await events(client, said(text, task_id))
    assert event.HasField("task"), event
    return event.task


def state(task: Task) -> str:
    return TaskState.Name(task.status.state)


def test_over_json_the_translator_answers_as_the_docs_promise(mock: Session) -> None:
    card = card_of(f"{mock.base_url}/a2a/translator")
    assert card.name == "translator"
    assert [skill.id for skill in card.skills] == ["translate"]
    assert card.capabilities.streaming

    async def use(client: Client) -> None:
        task = await sent(client, "hello there")
        assert state(task) == "TASK_STATE_COMPLETED"
        assert task.status.message.parts[0].text == "Translated."
        (artifact,) = task.artifacts
        assert (artifact.name, artifact.parts[0].text) == ("translation", "Bonjour")
        assert [message.parts[0].text for message in task.history] == ["hello there"]
        (greeting,) = await events(client, said("Say hi to Ana"))
        assert greeting.HasField("message")
        assert greeting.message.parts[0].text == "Salut !"
        assert greeting.message.role == Role.ROLE_AGENT
        failed = await sent(client, "what is a cat?")
        assert state(failed) == "TASK_STATE_FAILED"
        assert failed.status.message.parts[0].text == "I only know greetings."
        for _ in range(2):  # the sequence's error, then the same again
            with pytest.raises(InternalError, match="the dictionary is gone"):
                await sent(client, "what is a dog?")
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        assert fetched.id == task.id
        assert state(fetched) == "TASK_STATE_COMPLETED"
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))

    connected(f"{mock.base_url}/a2a/translator", use, streaming=False)
    lines = mock.mock_log.summary() if mock.mock_log else ""
    assert "a2a agent translator: SendMessage → reply 1 (task completed)" in lines
    assert "a2a agent translator: SendMessage → reply 3 sequence step 2" in lines
    assert "a2a agent translator: GetTask (error -32001)" in lines


def test_over_a_stream_each_state_and_artifact_is_an_event(mock: Session) -> None:
    async def use(client: Client) -> list[dict[str, Any]]:
        return [json_format.MessageToDict(event) for event in await events(client, said("hello again"))]

    streamed = connected(f"{mock.base_url}/a2a/translator", use, streaming=True)
    kinds = [next(iter(event)) for event in streamed]
    assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert streamed[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert streamed[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
    assert streamed[2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "Bonjour"}]
    assert streamed[3]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert {event[kind].get("taskId", event[kind].get("id")) for event, kind in zip(streamed, kinds, strict=True)} == {
        streamed[0]["task"]["id"]
    }


def test_the_booker_asks_for_input_moves_on_with_the_answer_and_cancels(mock: Session) -> None:
    assert not card_of(f"{mock.base_url}/a2a/booker").capabilities.streaming

    async def use(client: Client) -> None:
        waiting = await sent(client, "book a table")
        assert state(waiting) == "TASK_STATE_INPUT_REQUIRED"
        assert waiting.status.message.parts[0].text == "For which day?"
        booked = await sent(client, "Friday", waiting.id)
        assert (booked.id, state(booked)) == (waiting.id, "TASK_STATE_COMPLETED")
        (artifact,) = booked.artifacts
        assert json_format.MessageToDict(artifact.parts[0]) == {"data": {"table": 4.0, "confirmed": True}}
        assert [message.parts[0].text for message in booked.history] == ["book a table", "Friday"]
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=booked.id))
        with pytest.raises(UnsupportedOperationError):
            await sent(client, "and Saturday?", booked.id)
        working = await sent(client, "please wait")
        assert state(working) == "TASK_STATE_WORKING"
        canceled = await client.cancel_task(CancelTaskRequest(id=working.id))
        assert state(canceled) == "TASK_STATE_CANCELED"
        with pytest.raises(TaskNotFoundError):
            await sent(client, "hello", "no-such-task")

    connected(f"{mock.base_url}/a2a/booker", use, streaming=True)  # the card says no: the client sends, not streams


def test_a_stream_from_an_agent_that_does_not_stream_is_refused(mock: Session) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {"parts": []}}}
    answer = httpx.post(f"{mock.base_url}/a2a/booker", json=body, trust_env=False).json()
    assert answer["error"]["code"] == -32004


def test_a_send_that_returns_at_once_moves_on_with_each_poll(mock: Session) -> None:
    async def use(client: Client) -> list[str]:
        task = await sent(client, "hello, poll")
        seen = [state(task)]
        for _ in range(2):
            seen.append(state(await client.get_task(GetTaskRequest(id=task.id))))
        return seen

    seen = connected(f"{mock.base_url}/a2a/translator", use, streaming=False, polling=True)
    assert seen == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]


def test_through_the_proxy_the_real_agents_url_reaches_the_mock(mock: Session) -> None:
    trusted = ssl.create_default_context(cafile=mock.environment["SSL_CERT_FILE"])
    http = httpx.AsyncClient(proxy=mock.url, verify=trusted, trust_env=False)

    async def use(client: Client) -> Task:
        return await sent(client, "hello through the proxy")

    task = connected(WORKED["a2aAgents"][0]["url"], use, http, streaming=False)
    assert task.artifacts[0].parts[0].text == "Bonjour"
    root = httpx.get(
        "https://translate.example.com/.well-known/agent-card.json", proxy=mock.url, verify=trusted, trust_env=False
    )
    assert root.json()["supportedInterfaces"][0]["url"] == "https://translate.example.com/a2a"
    entries = mock.mock_log.entries if mock.mock_log else []
    assert any(entry["host"] == "translate.example.com" and "a2a" in entry for entry in entries)


def test_the_sdks_0_3_transport_is_answered_in_0_3(mock: Session) -> None:
    """The SDK's 0.3 transport sends `message/send` and `message/stream` and reads 0.3's objects back."""

    async def run() -> tuple[Task, list[StreamResponse], Task]:
        async with httpx.AsyncClient(trust_env=False) as http:
            transport = CompatJsonRpcTransport(http, None, f"{mock.base_url}/a2a/translator")
            answer = await transport.send_message(said("hello, 0.3"))
            streamed = [event async for event in transport.send_message_streaming(said("hello, streamed"))]
            fetched = await transport.get_task(GetTaskRequest(id=answer.task.id))
            return answer.task, streamed, fetched

    task, streamed, fetched = asyncio.run(run())
    assert state(task) == "TASK_STATE_COMPLETED"
    assert task.artifacts[0].parts[0].text == "Bonjour"
    assert task.status.message.parts[0].text == "Translated."
    assert [event.WhichOneof("payload") for event in streamed] == [
        "task",
        "status_update",
        "artifact_update",
        "status_update",
    ]
    assert TaskState.Name(streamed[-1].status_update.status.state) == "TASK_STATE_COMPLETED"
    assert (fetched.id, state(fetched)) == (task.id, "TASK_STATE_COMPLETED")
    lines = mock.mock_log.summary() if mock.mock_log else ""
    assert "a2a agent translator: message/send → reply 1 (task completed)" in lines
    assert "a2a agent translator: message/stream → reply 1 (task completed)" in lines


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b'{"id": 1, "method": "SendMessage"}', -32600),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}]', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {}}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": "hi"}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nope"}}', -32001),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig", "params": {}}', -32003),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}', -32007),
    ],
)
def test_bad_input_gets_the_protocols_own_error_and_the_mock_serves_on(mock: Session, body: bytes, code: int) -> None:
    answered = httpx.post(
        f"{mock.base_url}/a2a/translator", content=body, headers={"content-type": "application/json"}, trust_env=False
    )
    assert answered.status_code == 200
    assert answered.json()["error"]["code"] == code
    card = httpx.get(f"{mock.base_url}/a2a/translator/.well-known/agent.json", trust_env=False)
    assert card.json()["name"] == "translator"


def test_a_version_it_does_not_speak_and_a_get_of_the_endpoint_are_refused(mock: Session) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
    refused = httpx.post(f"{mock.base_url}/a2a/translator", json=body, headers={"A2A-Version": "2.0"}, trust_env=False)
    assert refused.json()["error"]["code"] == -32009
    assert httpx.get(f"{mock.base_url}/a2a/translator", trust_env=False).status_code == 405


def test_the_documented_python_example_prints_the_translation(
    mock: Session, capsys: pytest.CaptureFixture[str]
) -> None:
    (example,) = PYTHON
    scope: dict[str, Any] = {}
    exec(example, scope)
    asyncio.run(scope["translate"](mock.base_url))
    assert capsys.readouterr().out == "Bonjour\n"


def test_the_control_api_lists_the_agents_and_reset_removes_them(tmp_path: Path) -> None:
    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca")) as session:
        httpx.post(
            f"{session.base_url}/a2a/booker",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": {"parts": [{"text": "book"}]}},
            },
            trust_env=False,
        )
        status, listed, _ = call(session, "GET", "/a2a-agents", token="read-only")
        assert status == 200
        translator, booker = listed["agents"]
        assert translator["url"] == "https://translate.example.com/a2a"
        assert translator["card"]["skills"][0]["id"] == "translate"
        assert booker["mockUrl"] == f"{session.base_url}/a2a/booker"
        assert (booker["served"], booker["tasks"]) == ([1, 0, 0], 1)
        late = {"a2aAgents": [{"name": "late", "replies": [{"message": "here"}]}]}
        assert call(session, "POST", "/expectations", late)[0] == 200  # served at once
        said = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {"parts": [{"text": "?"}]}}}
        answer = httpx.post(f"{session.base_url}/a2a/late", json=said, trust_env=False).json()
        assert answer["result"]["message"]["parts"] == [{"text": "here"}]
        clash = {"a2aAgents": [{"name": "other", "path": "/a2a/late", "replies": [{"message": "x"}]}]}
        status, refused, _ = call(session, "POST", "/expectations", clash)
        assert status == 400
        assert "other: its path /a2a/late is A2A agent late's already" in json.dumps(refused)
        call(session, "POST", "/reset")
        assert call(session, "GET", "/a2a-agents")[1]["agents"] == []
        gone = httpx.post(f"{session.base_url}/a2a/booker", json={}, trust_env=False)
        assert gone.status_code == 404  # no agent answers any more: a miss, as for any request
        assert "no expectation answers this request" in gone.text


def test_chaos_and_the_journal_meet_a2a_requests_as_they_meet_llm_calls(tmp_path: Path) -> None:
    chaos = tmp_path / "chaos.json"
    rule = {"match": {"path": "/a2a/translator"}, "chaos": {"errorStatus": 503, "failRequestCount": 1}}
    chaos.write_text(json.dumps({"rules": [rule]}))
    plan = intercept_plan(chaos=[chaos])
    body = {"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "nope"}}
    with mocking(write_worked(tmp_path), Listening(ca_directory=tmp_path / "ca"), intercept=plan) as session:
        url = f"{session.base_url}/a2a/translator"
        faulted = httpx.post(url, json=body, trust_env=False)
        answered = httpx.post(url, json=body, trust_env=False)  # the rule's one failure is spent
        _, journal, _ = call(session, "GET", "/journal?path=/a2a/translator", token="read-only")
    assert faulted.status_code == 503
    assert answered.json()["error"]["code"] == -32001
    assert [entry["source"] for entry in journal["entries"]] == ["injected", "mocked"]
