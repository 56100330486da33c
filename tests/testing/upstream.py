"""A stand-in Anthropic Messages API (and OpenAI Chat Completions, at `/v1/chat/completions`) on 127.0.0.1 that
answers every request, counting them: what recording tests record from, and what proves a replay never reached
the network. A prompt that mentions the weather gets a tool call (Anthropic); every answer says how many
requests came before it, so a replay is told from a new answer. Two prompts get no answer at all: "hang up"
closes the connection at once, "never answer" keeps it open, silent, until the stand-in stops; "break off"
starts a stream and closes the connection after its first event."""

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class Upstream:
    def __init__(self) -> None:
        self.count = 0
        self.stopping = threading.Event()  # what "never answer" waits for
        counter = itertools.count(1)
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                upstream.count = next(counter)
                prompt = str(json.loads(body)["messages"][-1]["content"])
                if prompt in ("hang up", "never answer"):
                    if prompt == "never answer":
                        upstream.stopping.wait(60)
                    self.close_connection = True
                    return
                if prompt == "break off":
                    self._break_off(json.loads(body))
                    return
                shape = openai_answer if self.path.endswith("/chat/completions") else answer
                reply = json.dumps(shape(json.loads(body), upstream.count)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def _break_off(self, request: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                start = {"type": "message_start", "message": {**answer(request, upstream.count), "content": []}}
                event = f"event: message_start\ndata: {json.dumps(start)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                self.close_connection = True  # no last chunk: the stream ends in the middle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "Upstream":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
