"""A small typed client of the control API, for Python code that drives a running llmproxy without the pytest
plugin: a test, a notebook, a CI script. It answers with the API's own models (`llmproxy.control.models`) and
raises `ControlError` with the API's one-line error; it calls the control port directly, never through the
proxy the process's `HTTPS_PROXY` may point at.

    from llmproxy.control.client import Client

    control = Client.from_environment()          # LLMPROXY_CONTROL_URL and LLMPROXY_CONTROL_TOKEN
    control.add_expectations({"expectations": [{"respond": {"text": "Hi"}}]})
    print([entry.model for entry in control.journal(source="mocked").entries])

A client made for one test (`test_id`; the pytest plugin's `llmproxy_control` fixture is one) adds, lists and
clears that test's expectations, and reads and verifies that test's requests, unless a call names another.
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
    Verified,
    VerifyRequests,
)
from llmproxy.environment import CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE, TEST_ID_VARIABLE
from llmproxy.errors import LlmproxyError
from llmproxy.journal import Source
from llmproxy.mock.spec import ExpectationsFile, Match

_DIRECT: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # not through the proxy


class ControlError(LlmproxyError):
    """The control API refused a call (`status`), or could not be reached (`status` 0); the message is its
    one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Client:
    def __init__(self, url: str, token: str, timeout: float = 10.0, test_id: str | None = None) -> None:
        """`url`: the control port's origin, or any URL on it (`LLMPROXY_CONTROL_URL` is its chaos endpoint).
        `test_id`: the test each call is scoped to when it names none (None: every test)."""
        parts = urlsplit(url)
        self.api = f"{parts.scheme}://{parts.netloc}{API_BASE}"
        self._token = token
        self.timeout = timeout
        self.test_id = test_id

    @classmethod
    def from_environment(cls, environment: Mapping[str, str] = os.environ) -> "Client":
        """The run's control API, from the variables llmproxy gives the command it runs (or a session's
        `environment`), scoped to the test `LLMPROXY_TEST_ID` names when it is set (a pytest plugin test's)."""
        url, token = environment.get(CONTROL_URL_VARIABLE), environment.get(CONTROL_TOKEN_VARIABLE)
        if not url or not token:
            raise ControlError(0, f"no control API: {CONTROL_URL_VARIABLE} and {CONTROL_TOKEN_VARIABLE} are not set")
        return cls(url, token, test_id=environment.get(TEST_ID_VARIABLE) or None)

    def status(self) -> Status:
        return Status.model_validate(self._call("GET", "/status"))

    def journal(self, **filters: Any) -> JournalPage:
        """Filters as the endpoint's query: provider, model, path, source, test_id, since, limit (`test_id`:
        the client's unless given; None reads every test's)."""
        filters.setdefault("test_id", self.test_id)
        query = JournalQuery.model_validate(filters).model_dump(by_alias=True, exclude_defaults=True, mode="json")
        where = f"/journal?{urlencode(query)}" if query else "/journal"
        return JournalPage.model_validate(self._call("GET", where))

    def entry(self, seq: int) -> JournalEntry:
        return JournalEntry.model_validate(self._call("GET", f"/journal/{seq}"))

    def clear_journal(self) -> int:
        return Cleared.model_validate(self._call("DELETE", "/journal")).cleared

    def expectations(self, test_id: str | None = None) -> Expectations:
        """Every expectation, or only those added for `test_id` (the client's, unless given)."""
        return Expectations.model_validate(self._call("GET", "/expectations" + self._scoped(test_id)))

    def add_expectations(
        self, expectations: ExpectationsFile | Mapping[str, Any], test_id: str | None = None
    ) -> list[int]:
        """Entries in the expectations file's JSON (or its model); the ids they were given. `test_id` (the
        client's, unless given): they answer only requests sent with it in the `x-llmproxy-test-id` header."""
        body = _dumped(expectations) if isinstance(expectations, BaseModel) else dict(expectations)
        return Added.model_validate(self._call("POST", "/expectations" + self._scoped(test_id), body)).added

    def remove_expectation(self, expectation: int) -> None:
        Removed.model_validate(self._call("DELETE", f"/expectations/{expectation}"))

    def clear_expectations(self, test_id: str | None = None) -> int:
        """Remove every expectation, or only those added for `test_id` (the client's, unless given); how many."""
        return Cleared.model_validate(self._call("DELETE", "/expectations" + self._scoped(test_id))).cleared

    def verify_requests(
        self,
        match: Match | Mapping[str, Any] | None = None,
        *,
        exactly: int | None = None,
        at_least: int | None = None,
        at_most: int | None = None,
        source: Source | str | None = None,
        test_id: str | None = None,
    ) -> Verified:
        """Whether the journal holds as many requests as expected that hold to `match` (an expectation's
        match; None: any request) — `exactly`, or `at_least` and/or `at_most` (none: at least one) — of those
        answered so (`source`) and sent by `test_id` (the client's, unless given). `ok` False is an answer,
        with the `count` and the `closest` requests, not an error."""
        verify = VerifyRequests.model_validate(
            {
                "match": _dumped(match) if isinstance(match, BaseModel) else dict(match or {}),
                "exactly": exactly,
                "at_least": at_least,
                "at_most": at_most,
                "source": source,
                "test_id": test_id or self.test_id,
            }
        )
        return Verified.model_validate(self._call("POST", "/verify/requests", _dumped(verify)))

    def _scoped(self, test_id: str | None) -> str:
        scope = test_id or self.test_id
        return f"?{urlencode({'testId': scope})}" if scope is not None else ""

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method)
        request.add_header("authorization", f"Bearer {self._token}")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with _DIRECT.open(request, timeout=self.timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            with error:
                raise ControlError(error.code, _said(error.read()) or f"{error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ControlError(0, f"cannot reach the control API at {self.api}: {reason}") from None


def _said(body: bytes) -> str:
    try:
        answer = json.loads(body)
    except ValueError:
        return ""
    return str(answer.get("error", "")) if isinstance(answer, dict) else ""


def _dumped(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
