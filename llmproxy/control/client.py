"""A small typed client of the control API, for Python code that drives a running llmproxy without the pytest
plugin: a test, a notebook, a CI script. It answers with the API's own models (`llmproxy.control.models`) and
raises `ControlError` with the API's one-line error; it calls the control port directly, never through the
proxy the process's `HTTPS_PROXY` may point at.

    from llmproxy.control.client import Client

    control = Client.from_environment()          # LLMPROXY_CONTROL_URL and LLMPROXY_CONTROL_TOKEN
    control.add_expectations({"expectations": [{"respond": {"text": "Hi"}}]})
    print([entry.model for entry in control.journal(source="mocked").entries])
"""

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel

from llmproxy.control.models import (
    API_BASE,
    Added,
    Cleared,
    Expectations,
    JournalEntry,
    JournalPage,
    JournalQuery,
    Removed,
    Status,
)
from llmproxy.environment import CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE
from llmproxy.errors import LlmproxyError
from llmproxy.intercept.control import Answer
from llmproxy.mock.spec import ExpectationsFile

_DIRECT: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # not through the proxy


class ControlError(LlmproxyError):
    """The control API refused a call (`status`), or could not be reached (`status` 0); the message is its
    one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Client:
    def __init__(self, url: str, token: str, timeout: float = 10.0) -> None:
        """`url`: the control port's origin, or any URL on it (`LLMPROXY_CONTROL_URL` is its chaos endpoint)."""
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.api = self.origin + API_BASE
        self._token = token
        self.timeout = timeout

    @classmethod
    def from_environment(cls, environment: Mapping[str, str] = os.environ) -> "Client":
        """The run's control API, from the variables llmproxy gives the command it runs (or a session's
        `environment`)."""
        url, token = environment.get(CONTROL_URL_VARIABLE), environment.get(CONTROL_TOKEN_VARIABLE)
        if not url or not token:
            raise ControlError(0, f"no control API: {CONTROL_URL_VARIABLE} and {CONTROL_TOKEN_VARIABLE} are not set")
        return cls(url, token)

    def status(self) -> Status:
        return Status.model_validate(self._call("GET", "/status"))

    def journal(self, **filters: Any) -> JournalPage:
        """Filters as the endpoint's query: provider, model, path, source, test_id, since, limit."""
        query = JournalQuery.model_validate(filters).model_dump(by_alias=True, exclude_defaults=True, mode="json")
        where = f"/journal?{urlencode(query)}" if query else "/journal"
        return JournalPage.model_validate(self._call("GET", where))

    def entry(self, seq: int) -> JournalEntry:
        return JournalEntry.model_validate(self._call("GET", f"/journal/{seq}"))

    def clear_journal(self) -> int:
        return Cleared.model_validate(self._call("DELETE", "/journal")).cleared

    def expectations(self, test_id: str | None = None) -> Expectations:
        """Every expectation, or only those added for `test_id`."""
        return Expectations.model_validate(self._call("GET", "/expectations" + _scoped(test_id)))

    def add_expectations(
        self, expectations: ExpectationsFile | Mapping[str, Any], test_id: str | None = None
    ) -> list[int]:
        """Entries in the expectations file's JSON (or its model); the ids they were given. `test_id`: they
        answer only requests sent with it in the `x-llmproxy-test-id` header."""
        body = (
            expectations.model_dump(mode="json", by_alias=True, exclude_defaults=True)
            if isinstance(expectations, BaseModel)
            else dict(expectations)
        )
        return Added.model_validate(self._call("POST", "/expectations" + _scoped(test_id), body)).added

    def remove_expectation(self, expectation: int) -> None:
        Removed.model_validate(self._call("DELETE", f"/expectations/{expectation}"))

    def clear_expectations(self, test_id: str | None = None) -> int:
        """Remove every expectation, or only those added for `test_id`; how many."""
        return Cleared.model_validate(self._call("DELETE", "/expectations" + _scoped(test_id))).cleared

    def send(self, method: str, target: str, body: bytes = b"") -> Answer:
        """One request as it is (`target`: a path on the control port, with its query; `body`: JSON), and the
        answer whatever its status — what the MCP server relays. Raises ControlError (status 0) only when the
        port cannot be reached."""
        request = urllib.request.Request(self.origin + target, data=body or None, method=method)
        request.add_header("authorization", f"Bearer {self._token}")
        if body:
            request.add_header("content-type", "application/json")
        try:
            with _DIRECT.open(request, timeout=self.timeout) as response:
                return _answer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            with error:
                return _answer(error.code, error.headers, error.read())
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ControlError(0, f"cannot reach the control API at {self.api}: {reason}") from None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.send(method, API_BASE + path, json.dumps(body).encode() if body is not None else b"")
        if not 200 <= answer.status < 300:
            said = answer.body.get("error", "") if isinstance(answer.body, dict) else ""
            raise ControlError(answer.status, str(said) or f"{answer.status} from {method} {self.api}{path}")
        return answer.body


def _answer(status: int, headers: Any, data: bytes) -> Answer:
    """The answer as the control plane gave it: its JSON object, or its bytes when it is not one."""
    kept = tuple((name.lower(), value) for name, value in headers.items() if name.lower() in ("content-type", "allow"))
    try:
        document = json.loads(data)
    except ValueError:
        return Answer(status, data, kept)
    return Answer(status, document, kept) if isinstance(document, dict) else Answer(status, data, kept)


def _scoped(test_id: str | None) -> str:
    return f"?{urlencode({'testId': test_id})}" if test_id is not None else ""
