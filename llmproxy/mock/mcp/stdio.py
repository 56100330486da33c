"""A mock MCP server over stdio ("Transports", https://modelcontextprotocol.io/specification/2025-11-25/basic/
transports#stdio): one JSON-RPC message a line on stdin, each answer a line on stdout — nothing else goes to
stdout — until the client closes stdin. The process is the session.

A line that is not JSON gets the parse error (-32700), a message that is not JSON-RPC the invalid-request
error (-32600), with a null id; the server reads on. A tool's log messages and progress go out before its
result, `intervalMs` apart, as over HTTP.
"""

import logging
import time
from collections.abc import Callable, Iterable
from typing import IO, Any

import orjson

from llmproxy import jsonrpc
from llmproxy.jsonrpc import INVALID_REQUEST, PARSE_ERROR
from llmproxy.mcp import protocol
from llmproxy.mock.mcp.server import McpServerMock, McpSession

logger = logging.getLogger(__name__)


def serve_stdio(
    server: McpServerMock,
    lines: Iterable[bytes],
    output: IO[bytes],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Answer each line of `lines` on `output` until they end; how many messages were answered."""
    session = McpSession()
    answered = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            _send(output, jsonrpc.error(None, PARSE_ERROR, f"parse error: not JSON: {error}"))
            logger.warning("%s: a line that is not JSON (answered with a parse error): %.80r", server.name, line)
            continue
        if isinstance(message, list) and not protocol.batches(session.version):
            _send(
                output, jsonrpc.error(None, INVALID_REQUEST, f"JSON-RPC batches are not part of MCP {session.version}")
            )
            continue
        answers = [
            server.answer_message(each, session) for each in (message if isinstance(message, list) else [message])
        ]
        for answer in answers:
            for notification in answer.before:
                _send(output, notification)
                if answer.interval:
                    sleep(answer.interval)
        responses = [answer.response for answer in answers if answer.response is not None]
        if responses:
            _send(output, responses if isinstance(message, list) else responses[0])
        for answer in answers:
            answered += 1
            if answer.missed is not None:
                logger.warning("%s: %s: %s", server.name, answer.said, answer.missed)
            else:
                logger.info("%s: %s%s", server.name, answer.said, f" → {answer.by}" if answer.by else "")
    return answered


def _send(output: IO[bytes], message: Any) -> None:
    output.write(orjson.dumps(message) + b"\n")
    output.flush()
