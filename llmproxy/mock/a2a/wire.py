"""A2A's two JSON-RPC dialects as the mock speaks them: 1.0 (what a2a-sdk 1.x sends: `SendMessage`,
`SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`; ProtoJSON objects, states such as
`TASK_STATE_COMPLETED`, a result wrapped by what it is, `{"task": …}`) and 0.3 (`message/send`,
`message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`; objects tagged by `kind`, states such as
`completed`). A request is answered in the dialect of its method, so one agent serves clients of either.

The mock builds every object in the 0.3 form; `v1` rewrites one for a 1.0 client.
"""

from enum import Enum
from typing import Any, Final

from llmproxy.mock.a2a import spec

type JsonObject = dict[str, Any]

# the A2A specification's errors (JSON-RPC binding), beside JSON-RPC's own
TASK_NOT_FOUND: Final = -32001
TASK_NOT_CANCELABLE: Final = -32002
PUSH_NOT_SUPPORTED: Final = -32003
UNSUPPORTED_OPERATION: Final = -32004
EXTENDED_CARD_NOT_CONFIGURED: Final = -32007
VERSION_NOT_SUPPORTED: Final = -32009

VERSION_HEADER: Final = "a2a-version"
VERSIONS: Final = ("0.3", "1.0")


class Verb(Enum):
    SEND = "send"
    STREAM = "stream"
    GET = "get"
    CANCEL = "cancel"
    SUBSCRIBE = "subscribe"
    PUSH = "push"  # push notification configuration: not offered
    EXTENDED_CARD = "extended card"  # not offered


_V1: Final = {
    "SendMessage": Verb.SEND,
    "SendStreamingMessage": Verb.STREAM,
    "GetTask": Verb.GET,
    "CancelTask": Verb.CANCEL,
    "SubscribeToTask": Verb.SUBSCRIBE,
    "CreateTaskPushNotificationConfig": Verb.PUSH,
    "GetTaskPushNotificationConfig": Verb.PUSH,
    "ListTaskPushNotificationConfigs": Verb.PUSH,
    "DeleteTaskPushNotificationConfig": Verb.PUSH,
    "GetExtendedAgentCard": Verb.EXTENDED_CARD,
}
_V03: Final = {
    "message/send": Verb.SEND,
    "message/stream": Verb.STREAM,
    "tasks/get": Verb.GET,
    "tasks/cancel": Verb.CANCEL,
    "tasks/resubscribe": Verb.SUBSCRIBE,
    "tasks/pushNotificationConfig/set": Verb.PUSH,
    "tasks/pushNotificationConfig/get": Verb.PUSH,
    "tasks/pushNotificationConfig/list": Verb.PUSH,
    "tasks/pushNotificationConfig/delete": Verb.PUSH,
    "agent/getAuthenticatedExtendedCard": Verb.EXTENDED_CARD,
}


def verb(method: str) -> tuple[Verb, bool] | None:
    """What a method asks, and whether it is 1.0's; None for a method of neither dialect."""
    if method in _V1:
        return _V1[method], True
    if method in _V03:
        return _V03[method], False
    return None


def part(given: spec.Part) -> JsonObject:
    """A part of the file in the 0.3 form."""
    if given.text is not None:
        made: JsonObject = {"kind": "text", "text": given.text}
    elif given.data is not None:
        made = {"kind": "data", "data": given.data}
    else:
        assert given.file is not None
        made = {"kind": "file", "file": given.file.model_dump(exclude_none=True)}
    if given.metadata is not None:
        made["metadata"] = given.metadata
    return made


def texts(message: JsonObject) -> str:
    """A received message's text parts, one a line (either dialect: a 0.3 part says `kind: text`, a 1.0 part
    is text by having `text`)."""
    parts = message.get("parts")
    found = (
        [each["text"] for each in parts if isinstance(each, dict) and isinstance(each.get("text"), str)]
        if isinstance(parts, list)
        else []
    )
    return "\n".join(found)


def received(message: JsonObject) -> JsonObject:
    """A message a client sent, in the 0.3 form (for the task's history)."""
    given = message.get("parts")
    parts = given if isinstance(given, list) else []
    made = {key: value for key, value in message.items() if key not in ("parts", "role", "kind")}
    made.update(kind="message", role="user", parts=[_part_v03(each) for each in parts if isinstance(each, dict)])
    return made


def _part_v03(given: JsonObject) -> JsonObject:
    if "kind" in given:
        return given
    extra = {"metadata": given["metadata"]} if "metadata" in given else {}
    if "text" in given:
        return {"kind": "text", "text": given["text"], **extra}
    if "data" in given:
        return {"kind": "data", "data": given["data"], **extra}
    file: JsonObject = {}
    for ours, theirs in (("uri", "url"), ("bytes", "raw"), ("mimeType", "mediaType"), ("name", "filename")):
        if theirs in given:
            file[ours] = given[theirs]
    return {"kind": "file", "file": file, **extra}


def v1(value: JsonObject) -> JsonObject:
    """A task, message, artifact or stream event of the mock's (0.3 form) as A2A 1.0 spells it."""
    kind = value.get("kind")
    if kind == "task":
        made = _without(value, "kind")
        made["status"] = _status_v1(value["status"])
        if "artifacts" in value:
            made["artifacts"] = [_artifact_v1(each) for each in value["artifacts"]]
        if "history" in value:
            made["history"] = [v1(each) for each in value["history"]]
        return made
    if kind == "message":
        made = _without(value, "kind")
        made["role"] = "ROLE_AGENT" if value.get("role") == "agent" else "ROLE_USER"
        made["parts"] = [_part_v1(each) for each in value.get("parts", [])]
        return made
    if kind == "status-update":
        return {**_without(value, "kind", "final"), "status": _status_v1(value["status"])}
    if kind == "artifact-update":
        return {**_without(value, "kind", "append"), "artifact": _artifact_v1(value["artifact"])}
    raise ValueError(f"not an A2A object: {kind!r}")


_WRAPPED: Final = {
    "task": "task",
    "message": "message",
    "status-update": "statusUpdate",
    "artifact-update": "artifactUpdate",
}


def result(value: JsonObject, is_v1: bool, wrapped: bool) -> JsonObject:
    """`value` in the request's dialect; `wrapped`: as 1.0 wraps a send's result and a stream's events
    (`{"task": …}`, `{"statusUpdate": …}`); a task asked for by id is not wrapped."""
    if not is_v1:
        return value
    return {_WRAPPED[value["kind"]]: v1(value)} if wrapped else v1(value)


def _without(value: JsonObject, *names: str) -> JsonObject:
    return {key: item for key, item in value.items() if key not in names}


def _status_v1(status: JsonObject) -> JsonObject:
    made = {**status, "state": "TASK_STATE_" + status["state"].replace("-", "_").upper()}
    if "message" in status:
        made["message"] = v1(status["message"])
    return made


def _artifact_v1(artifact: JsonObject) -> JsonObject:
    return {**artifact, "parts": [_part_v1(each) for each in artifact["parts"]]}


def _part_v1(given: JsonObject) -> JsonObject:
    extra = {"metadata": given["metadata"]} if "metadata" in given else {}
    kind = given.get("kind")
    if kind == "text":
        return {"text": given["text"], **extra}
    if kind == "data":
        return {"data": given["data"], **extra}
    file = given.get("file", {})
    made: JsonObject = {}
    for ours, theirs in (("uri", "url"), ("bytes", "raw"), ("mimeType", "mediaType"), ("name", "filename")):
        if ours in file:
            made[theirs] = file[ours]
    return {**made, **extra}
