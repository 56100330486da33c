"""What a mock A2A agent answers, in-process (no HTTP): sequences used up, a 0.3 send that does not block
moving on with each poll, a resubscription, a message no reply answers, history kept to what is asked."""

from typing import Any

from llmproxy.mock.a2a.agent import A2aAgentMock
from llmproxy.mock.a2a.spec import A2aAgent


def agent(*replies: dict[str, Any]) -> A2aAgentMock:
    return A2aAgentMock(A2aAgent.model_validate({"name": "a", "replies": list(replies)}))


def send(mock: A2aAgentMock, text: str, method: str = "message/send", **params: Any) -> Any:
    message = {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": text}]}
    answered = mock.answer({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message, **params}})
    return answered.response if answered.response is not None else answered


def test_a_used_up_sequence_loops_or_fails_the_task_as_it_says() -> None:
    looping = agent({"sequence": [{"message": "one"}, {"message": "two"}], "onExhausted": "loop"})
    said = [send(looping, "x")["result"]["parts"][0]["text"] for _ in range(3)]
    assert said == ["one", "two", "one"]
    failing = agent({"sequence": [{"message": "one"}], "onExhausted": "error"})
    send(failing, "x")
    task = send(failing, "x")["result"]
    assert task["status"]["state"] == "failed"
    assert task["status"]["message"]["parts"][0]["text"] == "the sequence's 1 answers are used up (onExhausted: error)"


def test_a_send_that_does_not_block_moves_on_with_each_poll_and_rests() -> None:
    mock = agent({"states": ["submitted", "working", "completed"], "artifacts": [{"text": "done"}]})
    task = send(mock, "go", configuration={"blocking": False})["result"]
    assert (task["kind"], task["status"]["state"], "artifacts" in task) == ("task", "submitted", False)
    polled = [
        mock.answer({"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"id": task["id"]}}).response
        for n in range(3)
    ]
    assert [answer["result"]["status"]["state"] for answer in polled] == ["working", "completed", "completed"]
    assert polled[-1]["result"]["artifacts"][0]["parts"] == [{"kind": "text", "text": "done"}]


def test_a_resubscription_sends_the_task_as_it_stands_then_what_is_left() -> None:
    mock = agent({"states": ["working", "completed"]})
    task = send(mock, "go", configuration={"blocking": False})["result"]
    followed = mock.answer({"jsonrpc": "2.0", "id": 2, "method": "tasks/resubscribe", "params": {"id": task["id"]}})
    assert followed.events is not None
    results = [event["result"] for _, event in followed.events]
    assert [(result["kind"], result["status"]["state"]) for result in results] == [
        ("task", "working"),
        ("status-update", "completed"),
    ]
    assert results[-1]["final"] is True


def test_a_message_no_reply_answers_fails_its_task_saying_what_came_nearest() -> None:
    mock = agent(
        {"match": {"textContains": "book"}, "message": "booked"}, {"match": {"textMatches": "^x$"}, "message": "x"}
    )
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "cook a meal"}]}
    answered = mock.answer({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}})
    assert answered.missed == (
        "no reply of agent a answers this message; nearest, reply 1: textContains: 'book' not in 'cook a meal'"
    )
    assert answered.response is not None
    assert answered.response["result"]["task"]["status"]["state"] == "TASK_STATE_FAILED"


def test_history_is_kept_to_the_length_asked() -> None:
    mock = agent({"match": {"continues": False}, "states": ["input-required"]}, {"states": ["completed"]})
    task = send(mock, "first")["result"]
    message = {"messageId": "2", "role": "ROLE_USER", "parts": [{"text": "second"}], "taskId": task["id"]}
    mock.answer({"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": message}})
    got = mock.answer(
        {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task["id"], "historyLength": 1}}
    )
    assert got.response is not None
    assert got.response["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [each["parts"] for each in got.response["result"]["history"]] == [[{"text": "second"}]]
