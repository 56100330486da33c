"""A stand-in Anthropic Messages API (and OpenAI Chat Completions, at `/v1/chat/completions`) on 127.0.0.1 that
answers every request, counting them: what recording tests record from, and what proves a replay never reached
the network. A prompt that mentions the weather gets a tool call (Anthropic); every answer says how many
requests came before it, so a replay is told from a new answer. Two prompts get no answer at all: "hang up"
closes the connection at once, "never answer" keeps it open, silent, until the stand-in stops; "break off"
starts a stream and closes the connection after its first event."""

import itertools
import json
import socket
import threading
from typing import Any

from tests.conformance.server import LoopbackServer, Received, Reply


def answer(request: dict[str, Any], count: int) -> dict[str, Any]:
    prompt = str(request["messages"][-1]["content"])
    content: list[dict[str, Any]] = [{"type": "text", "text": f"answer {count} to: {prompt}"}]
    if "weather" in prompt:
        content.append({"type": "tool_use", "id": f"toolu_{count}", "name": "get_weather", "input": {"city": "Oslo"}})
    return {
        "id": f"msg_{count}",
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": content,
        "stop_reason": "tool_use" if len(content) > 1 else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def openai_answer(request: dict[str, Any], count: int) -> dict[str, Any]:
    prompt = str(request["messages"][-1]["content"])
    message = {"role": "assistant", "content": f"answer {count} to: {prompt}"}
    return {
        "id": f"chatcmpl-{count}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


class Upstream(LoopbackServer):
    def __init__(self) -> None:
        self.count = 0
        self.stopping = threading.Event()  # what "never answer" waits for
        self._counter = itertools.count(1)
        super().__init__(answer=self._answer)

    def _answer(self, received: Received) -> Reply:
        self.count = next(self._counter)
        request = json.loads(received.body)
        prompt = str(request["messages"][-1]["content"])
        if prompt in ("hang up", "never answer"):
            if prompt == "never answer":
                self.stopping.wait(60)
            return Reply(hang_up=True)
        if prompt == "break off":
            return Reply(takeover=lambda connection: _break_off(connection, request, self.count))
        shape = openai_answer if received.path.endswith("/chat/completions") else answer
        reply = json.dumps(shape(request, self.count)).encode()
        return Reply(200, {"content-type": "application/json"}, reply)

    def close(self) -> None:
        self.stopping.set()
        super().close()


def _break_off(connection: socket.socket, request: dict[str, Any], count: int) -> None:
    """A stream's head and first event, then the connection closes: no last chunk, the stream ends in the
    middle."""
    start = {"type": "message_start", "message": {**answer(request, count), "content": []}}
    event = f"event: message_start\ndata: {json.dumps(start)}\n\n".encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    connection.sendall(head + b"%x\r\n%s\r\n" % (len(event), event))
