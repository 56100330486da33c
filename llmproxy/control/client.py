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
    Reset,
    Status,
)
from llmproxy.control.run_models import Load, Loaded, Save, Saved, Stopping
from llmproxy.environment import CONTROL_TOKEN_VARIABLE, CONTROL_URL_VARIABLE
from llmproxy.errors import LlmproxyError
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
        self.api = f"{parts.scheme}://{parts.netloc}{API_BASE}"
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

    def reset(self) -> Reset:
        """No expectations, an empty journal, no chaos per host, quota and budget counters at 0."""
        return Reset.model_validate(self._call("POST", "/reset"))

    def load(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        inline: ExpectationsFile | Mapping[str, Any] | None = None,
        kind: str | None = None,
        test_id: str | None = None,
    ) -> Loaded:
        """An expectations file, a cassette or a folder of them (`path`, on the proxy's machine), or expectations
        given `inline`, loaded into the run."""
        if isinstance(inline, BaseModel):
            inline = inline.model_dump(mode="json", by_alias=True, exclude_unset=True)
        given = {"path": os.fspath(path) if path is not None else None, "inline": inline, "kind": kind}
        body = Load.model_validate(given | {"test_id": test_id}).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )
        return Loaded.model_validate(self._call("POST", "/load", body))

    def save(self, path: str | os.PathLike[str], **options: Any) -> Saved:
        """What the proxy saw, written to a cassette at `path`; options as the endpoint's body: sources, test_id,
        provider, model, since, overwrite."""
        body = Save.model_validate({"path": os.fspath(path), **options})
        return Saved.model_validate(self._call("POST", "/save", body.model_dump(mode="json", by_alias=True)))

    def stop(self) -> Stopping:
        """End the run as Ctrl-C would; it ends once this returns."""
        return Stopping.model_validate(self._call("POST", "/stop"))

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


def _scoped(test_id: str | None) -> str:
    return f"?{urlencode({'testId': test_id})}" if test_id is not None else ""
