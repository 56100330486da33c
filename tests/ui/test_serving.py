"""The dashboard's page and its event stream on a real running mock's control port, over HTTP: the way in
(the printed URL's token traded for a cookie, the URL left without it), every refusal (no token, another
run's token, a change from another origin, a read-only page), the security headers, and the stream carrying an
official SDK's request and the counters it moved — and, on the hub alone, a reader that does not read losing
events, counted, while the journal's writer never waits."""

import threading
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pydantic
import pytest

from llmproxy.control.event_models import Counters
from llmproxy.control.events import EventHub, encode
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE, CONTROL_TOKEN_VARIABLE
from llmproxy.journal import Journal, Source
from llmproxy.model.exchange import RawRequest
from llmproxy.session import Session
from tests.mock.sdk_clients import openai_client
from tests.ui.dashboard import cookie_of, events, get, mock


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from mock(tmp_path_factory)


def test_the_printed_url_trades_its_token_for_a_cookie_and_leaves_it_behind(proxy: Session) -> None:
    parts = urlsplit(proxy.ui_url)
    assert parts.path == "/llmproxy/ui/"
    assert parts.query == f"token={proxy.environment[CONTROL_TOKEN_VARIABLE]}"
    entered = get(proxy.ui_url, f"{parts.path}?{parts.query}")
    assert entered.status == 303
    assert entered.getheader("location") == "/llmproxy/ui/"  # the token stays out of the history and Referer
    name, _, rest = (entered.getheader("set-cookie") or "").partition("=")
    assert name == f"llmproxy-token-{parts.port}"  # per port: another run on this machine keeps its own
    assert {"HttpOnly", "SameSite=Strict", "Path=/llmproxy"} <= {part.strip() for part in rest.split(";")}

    page = get(proxy.ui_url, "/llmproxy/ui/", {"cookie": cookie_of(proxy)})
    assert page.status == 200
    assert page.getheader("content-type") == "text/html; charset=utf-8"
    policy = page.getheader("content-security-policy") or ""
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert page.getheader("referrer-policy") == "no-referrer"
    script = get(proxy.ui_url, "/llmproxy/ui/app.js", {"cookie": cookie_of(proxy)})
    assert script.status == 200
    assert script.getheader("content-type") == "text/javascript; charset=utf-8"
    journal = get(proxy.ui_url, "/llmproxy/api/v1/journal", {"cookie": cookie_of(proxy)})
    assert journal.status == 200  # the API takes the cookie as it takes the header


@pytest.mark.parametrize(
    "path", ["/llmproxy/ui/", "/llmproxy/ui/app.js", "/llmproxy/api/v1/journal", "/llmproxy/api/v1/events"]
)
def test_without_the_token_the_page_and_the_api_are_401(proxy: Session, path: str) -> None:
    assert get(proxy.ui_url, path).status == 401
    assert get(proxy.ui_url, path, {"cookie": "llmproxy-token-1=not-it"}).status == 401
    other_port = f"llmproxy-token-{urlsplit(proxy.ui_url).port}=wrong"
    assert get(proxy.ui_url, path, {"cookie": other_port}).status == 401


def test_the_page_without_its_slash_is_sent_to_it(proxy: Session) -> None:
    """`/llmproxy/ui` names its files relative to `/llmproxy/`: the page is always its folder."""
    token = proxy.environment[CONTROL_TOKEN_VARIABLE]
    entered = get(proxy.ui_url, f"/llmproxy/ui?token={token}")
    assert entered.status == 303
    assert entered.getheader("location") == "/llmproxy/ui/"
    again = get(proxy.ui_url, "/llmproxy/ui", {"cookie": cookie_of(proxy)})
    assert again.status == 303
    assert again.getheader("location") == "/llmproxy/ui/"


def test_a_wrong_token_in_the_url_sets_no_cookie(proxy: Session) -> None:
    answer = get(proxy.ui_url, "/llmproxy/ui/?token=guessed")
    assert answer.status == 401
    assert answer.getheader("set-cookie") is None


def test_a_file_outside_the_page_is_not_served(proxy: Session) -> None:
    cookie = {"cookie": cookie_of(proxy)}
    for path in ("/llmproxy/ui/../control/auth.py", "/llmproxy/ui/%2e%2e/control/auth.py", "/llmproxy/ui/nothing.js"):
        assert get(proxy.ui_url, path, cookie).status == 404


def test_a_change_with_the_cookie_must_come_from_the_page(proxy: Session) -> None:
    """A page of another origin (another port of 127.0.0.1 is the same site: SameSite lets the cookie go) cannot
    change the run with the page's cookie; the page itself can, and the read-only page cannot."""
    origin = f"http://127.0.0.1:{urlsplit(proxy.ui_url).port}"
    cookie = cookie_of(proxy)
    delete = "/llmproxy/api/v1/journal"
    assert get(proxy.ui_url, delete, {"cookie": cookie}, "DELETE").status == 403
    assert get(proxy.ui_url, delete, {"cookie": cookie, "origin": "http://127.0.0.1:1"}, "DELETE").status == 403
    assert get(proxy.ui_url, delete, {"cookie": cookie, "origin": origin}, "DELETE").status == 200
    read_only = cookie_of(proxy, proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE])
    assert get(proxy.ui_url, delete, {"cookie": read_only, "origin": origin}, "DELETE").status == 403
    page = get(proxy.ui_url, "/llmproxy/ui/", {"cookie": read_only})
    assert page.status == 200


def test_the_page_says_what_its_token_may_do(proxy: Session) -> None:
    read_only = cookie_of(proxy, proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE])
    for cookie, access in ((cookie_of(proxy), "mutate"), (read_only, "read")):
        parts = urlsplit(proxy.ui_url)
        origin = f"http://{parts.hostname}:{parts.port}"
        request = urllib.request.Request(f"{origin}/llmproxy/ui/", headers={"cookie": cookie})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as page:
            assert f'<meta name="llmproxy-access" content="{access}">' in page.read().decode()


def test_the_event_stream_carries_an_sdk_request_and_the_counters_it_moved(proxy: Session) -> None:
    token = proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE]
    with events(proxy, {"authorization": f"Bearer {token}"}) as stream:
        name, hello = next(stream)
        assert name == "hello"
        last = hello["counts"]["last"]
        with openai_client(proxy) as client:
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "The weather?"}])
        entry = next(data for name, data in stream if name == "entry")
        assert entry["seq"] == last + 1
        assert (entry["source"], entry["provider"], entry["model"]) == ("mocked", "openai", "gpt-4o-mini")
        assert entry["usage"]["outputTokens"] > 0
        served = next(
            data["expectations"][1]["served"]
            for name, data in stream
            if name == "counters" and data["counts"]["last"] > last
        )
        assert served >= 1


class _Kept:
    """A journal entry's reader that only numbers it: the hub's own test needs no exchange."""

    def request(self, capture: Any) -> Any:
        raise AssertionError("not read")

    def captured(self, capture: Any) -> Any:
        raise AssertionError("not read")

    def exchange(self, capture: Any, seq: int) -> Any:
        raise AssertionError("not read")

    def glance(self, capture: Any) -> Any:
        raise AssertionError("not read")

    def seen(self, capture: Any) -> Any:
        raise AssertionError("not read")

    @property
    def redactor(self) -> Any:
        raise AssertionError("not read")


class _Seq(pydantic.BaseModel):
    seq: int


REQUEST = RawRequest("GET", "http://", "example.com", 80, "/", "HTTP/1.1", (), b"", None)


def test_a_reader_that_does_not_read_loses_events_counted_and_the_writer_never_waits() -> None:
    journal = Journal(100)
    hub = EventHub(
        journal, lambda entry: encode("entry", _Seq(seq=entry.seq), entry.seq), lambda: Counters(), capacity=2
    )
    slow = hub.stream()
    assert next(slow).startswith(b"event: hello")
    added = threading.Event()

    def add() -> None:  # the proxy's side: 50 entries in ten batches, while the reader reads nothing
        for batch in range(10):
            for _ in range(5):
                journal.add((Source.MOCKED, None, _Kept(), None, REQUEST))
            for _ in range(400):  # the publisher read them: the next five are a batch of their own
                if hub.published == 5 * (batch + 1):
                    break
                threading.Event().wait(0.01)
        added.set()

    writer = threading.Thread(target=add)
    writer.start()
    writer.join(timeout=30)
    assert added.is_set()  # the writer finished with the reader stuck: it never waited on it
    assert hub.published == 50
    for _ in range(400):  # the counters, sent once (they never change), in the publisher's own time
        if hub.dropped >= 51 - 11:
            break
        threading.Event().wait(0.05)
    written = next(slow)  # one write: what was dropped, said first, then every batch the queue kept
    told, _, rest = written.partition(b"\n\n")
    events = [event for event in rest.split(b"\n\n") if event]
    entries = [event for event in events if event.startswith(b"event: entry")]
    assert told == f'event: dropped\ndata: {{"dropped":{51 - len(events)}}}'.encode()
    assert len(events) <= 11  # two batches at most,
    assert len(entries) % 5 == 0  # whole ones
    ids = [int(event.split(b"\n")[1].removeprefix(b"id: ")) for event in entries]
    assert ids == sorted(set(ids))
    slow.close()
    assert hub.readers == 0
    hub.close()


def test_closing_the_hub_ends_every_stream() -> None:
    hub = EventHub(Journal(10), lambda entry: encode("entry", _Seq(seq=entry.seq), entry.seq), lambda: Counters())
    stream = hub.stream()
    next(stream)
    hub.close()
    assert all(chunk.startswith(b"event: counters") for chunk in stream)  # what was sent before; then the end
    assert hub.readers == 0
