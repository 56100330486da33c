"""The WebSocket side of the scripted upstream (clis.ScriptedServer): the Responses API over WebSocket as
api.openai.com serves Codex CLI — `response.create` messages in, Responses streaming events out, one text
message each, on one connection.

Built on the `websockets` library's sans-I/O protocol (permessage-deflate included), so the upstream shares
no WebSocket code with llmproxy's relay (wsproto). A warm-up (`generate: false`) gets an empty completed
response and takes no turn; every other request takes the next scripted turn. Requests are kept as sent; the
usage of each answer is worked out on the request read whole (one naming `previous_response_id` is that
response's input and output followed by its own, as the API reads it).
"""

import json
import socket
from collections.abc import Callable
from typing import Any

from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

from llmproxy.model import Completion, StopReason
from llmproxy.providers.openai_responses.websocket import ResponsesConnection
from llmproxy.providers.registry import CHAT_CODECS

RESPONSES = CHAT_CODECS["openai-responses"]

type NextTurn = Callable[[dict[str, Any]], Completion | None]  # the next scripted answer, None when none is left
type WithUsage = Callable[[Completion, dict[str, Any]], Completion]  # an answer and the whole request it answers


def serve_websocket(
    sock: socket.socket, head: bytes, next_turn: NextTurn, received: list[dict[str, Any]], with_usage: WithUsage
) -> None:
    """Run one WebSocket connection whose upgrade request (`head`, the request line and headers) was read
    already, until the client closes it. Each message the client sends is appended to `received`; each
    answer gets its usage from `with_usage`."""
    connection = ResponsesConnection()  # the request before, to read the next one whole
    protocol = ServerProtocol(extensions=[ServerPerMessageDeflateFactory()])
    protocol.receive_data(head)
    request = protocol.events_received()[0]
    assert isinstance(request, Request)
    protocol.send_response(protocol.accept(request))
    _flush(sock, protocol)
    pieces: list[bytes] = []
    while True:
        data = sock.recv(65536)
        if data:
            protocol.receive_data(data)
        else:
            protocol.receive_eof()
        for frame in protocol.events_received():
            assert isinstance(frame, Frame)
            if frame.opcode in (Opcode.TEXT, Opcode.CONT):
                pieces.append(frame.data)
                if frame.fin:
                    message = json.loads(b"".join(pieces))
                    pieces.clear()
                    received.append(message)
                    _answer(protocol, message, next_turn, with_usage, connection)
        _flush(sock, protocol)
        if not data or protocol.close_expected():
            return


def _answer(
    protocol: ServerProtocol,
    message: dict[str, Any],
    next_turn: NextTurn,
    with_usage: WithUsage,
    connection: ResponsesConnection,
) -> None:
    body = {key: value for key, value in message.items() if key != "type"}
    whole = connection.request(message) or body  # a response it does not know of: the request as it came
    if message.get("generate") is False:
        completion: Completion | None = Completion(id=f"resp_warmup_{len(str(body))}", stop_reason=StopReason.END_TURN)
    else:
        completion = next_turn(message)
    if completion is None:
        error = {"type": "error", "status": 404, "error": {"type": "invalid_request_error", "message": "no turn left"}}
        protocol.send_text(json.dumps(error).encode())
        connection.answered([])
        return
    events = []
    for frame in RESPONSES.encode_stream(with_usage(completion, whole), body):
        data = frame.split(b"\ndata: ", 1)[1].rstrip(b"\n")  # SSE frames; a WebSocket carries their data alone
        protocol.send_text(data)
        events.append(json.loads(data))
    connection.answered(events)


def _flush(sock: socket.socket, protocol: ServerProtocol) -> None:
    for data in protocol.data_to_send():
        if data:
            sock.sendall(data)
