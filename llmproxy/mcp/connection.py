"""A raw connection to an MCP server, for `llmproxy mcp-check`: JSON-RPC messages sent as written (garbage
too) and what came back read as it came, with nothing of an SDK in between to smooth over what a server gets
wrong. Over Streamable HTTP, each message is a POST carrying the session id and protocol version once
`initialize` gave them (unless a check leaves them out on purpose); over stdio, a line to the server's stdin,
and the lines it writes until the answer to that request.
"""

import contextlib
import json
import queue
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Final, Protocol

from llmproxy.mcp import protocol

TIMEOUT: Final = 10.0  # seconds a server has to answer one message
SHORT: Final = 3.0  # for an answer a server gives at once or never (a line that is not JSON)


@dataclass(frozen=True, slots=True)
class Answer:
    status: int | None  # the HTTP status; None over stdio
    headers: Mapping[str, str]  # lower-case names
    messages: list[Any]  # the JSON-RPC messages it carried, the answer last when there is one
    problem: str | None = None  # why nothing could be read: a timeout, a body that is not JSON, a refused connection

    def response(self, request_id: object) -> dict[str, Any] | None:
        """The message that answers `request_id`, if it came."""
        found = [m for m in self.messages if isinstance(m, dict) and "method" not in m and m.get("id") == request_id]
        return found[-1] if found else None


class Connection(Protocol):
    transport: str  # "http" or "stdio"

    def send(
        self, message: Any, *, raw: bytes | None = None, headers: Mapping[str, str] | None = None, wait: float = TIMEOUT
    ) -> Answer:
        """`message` sent (or `raw` bytes in its place); `headers` (HTTP) on top of the session's, a value of
        "" leaving a header out; `wait`: seconds for the answer."""
        ...

    def close(self) -> None: ...


class HttpConnection:
    transport = "http"

    def __init__(self, url: str) -> None:
        self.url = url
        self.session: str | None = None
        self.version: str | None = None

    def send(
        self, message: Any, *, raw: bytes | None = None, headers: Mapping[str, str] | None = None, wait: float = TIMEOUT
    ) -> Answer:
        sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.session:
            sent[protocol.SESSION_HEADER] = self.session
        if self.version:
            sent[protocol.VERSION_HEADER] = self.version
        sent |= {name.lower(): value for name, value in (headers or {}).items()}
        body = raw if raw is not None else json.dumps(message).encode()
        request = urllib.request.Request(
            self.url, data=body, headers={k: v for k, v in sent.items() if v}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=wait) as reply:
                status, got, data = reply.status, reply.headers, reply.read()
        except urllib.error.HTTPError as error:
            status, got, data = error.code, error.headers, error.read()
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            return Answer(None, {}, [], f"cannot reach {self.url}: {reason}")
        lowered = {name.lower(): value for name, value in got.items()}
        messages, problem = _messages(lowered.get("content-type", ""), data)
        answer = Answer(status, lowered, messages, problem)
        if isinstance(message, dict) and message.get("method") == "initialize":
            self.session = lowered.get(protocol.SESSION_HEADER) or None
            result = answer.response(message.get("id"))
            version = (result or {}).get("result", {}).get("protocolVersion")
            self.version = version if isinstance(version, str) else None
        return answer

    def close(self) -> None:
        if self.session:
            request = urllib.request.Request(self.url, headers={protocol.SESSION_HEADER: self.session}, method="DELETE")
            with contextlib.suppress(urllib.error.URLError, OSError):  # ending the session is a courtesy
                urllib.request.urlopen(request, timeout=TIMEOUT).close()


def _messages(content_type: str, data: bytes) -> tuple[list[Any], str | None]:
    if not data.strip():
        return [], None
    if content_type.startswith("text/event-stream"):
        found = []
        for event in data.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n"):
            lines = [line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")]
            if lines:
                try:
                    found.append(json.loads("\n".join(lines)))
                except ValueError:
                    return found, "an event whose data is not JSON"
        return found, None
    try:
        parsed = json.loads(data)
    except ValueError:
        return [], f"a {content_type or 'body'} that is not JSON: {data[:60]!r}"
    return (parsed if isinstance(parsed, list) else [parsed]), None


class StdioConnection:
    transport = "stdio"

    def __init__(self, command: Sequence[str]) -> None:
        """Starts the server (raises OSError when it cannot be)."""
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        assert self.process.stdout is not None
        self._reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self._reader.start()
        self.stray: list[str] = []  # lines that were not JSON-RPC

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(
        self, message: Any, *, raw: bytes | None = None, headers: Mapping[str, str] | None = None, wait: float = TIMEOUT
    ) -> Answer:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write((raw if raw is not None else json.dumps(message).encode()) + b"\n")
            stdin.flush()
        except OSError:
            return Answer(None, {}, [], f"the server exited (status {self.process.poll()})")
        if raw is None and not (isinstance(message, dict) and "id" in message):
            return Answer(None, {}, [])  # a notification: nothing is to answer it
        wanted = message.get("id") if raw is None else None
        messages: list[Any] = []
        while True:
            try:
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                return Answer(None, {}, messages, f"no answer within {wait:g}s")
            if line is None:
                return Answer(None, {}, messages, f"the server exited (status {self.process.wait()})")
            try:
                parsed = json.loads(line)
            except ValueError:
                self.stray.append(line.decode("utf-8", "replace").strip())
                continue
            messages.append(parsed)
            if isinstance(parsed, dict) and "method" not in parsed and parsed.get("id") == wanted:
                return Answer(None, {}, messages)

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(TIMEOUT)  # it ends with the server's stdout
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass
class Opener:
    """Makes connections to one target: the version check needs a second, fresh one."""

    url: str | None = None
    command: Sequence[str] = field(default_factory=list)

    def open(self) -> Connection:
        return HttpConnection(self.url) if self.url is not None else StdioConnection(self.command)

    @property
    def target(self) -> str:
        return self.url if self.url is not None else " ".join(self.command)
