"""The official SDKs' own retry logic against injected faults, through the proxy (docs/providers.md#how-the-sdks-retry):
two injected errors, then the answer — each SDK gets through with exactly two retries, having waited what the
provider-correct `retry-after` said where the SDK reads one (a hint shorter than the SDK's own backoff, so waiting it
proves the header was read). A quota's rate-limit headers count down on successes and read zero on the 429. Waits are a
fifth of a second: the tests stay fast."""

import time
from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.intercept.aftermath import Next, Outcome
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.session import Session
from tests.mock.sdk_clients import anthropic_client, bedrock_client, openai_client, serving, trusting

HINT = 0.2  # seconds: below the Stainless SDKs' first backoff (0.375-0.5 s) and botocore's (0-1 s)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, {"expectations": [{"respond": {"text": "recovered"}}]})


class Faulted:
    """A profile on one host for the duration of a test, and what followed its faults."""

    def __init__(self, proxy: Session, host: str, **profile: Any) -> None:
        self.proxy, self.host = proxy, host
        self.before = len(proxy.intercept.aftermath.outcomes)
        self.answered_before = len(proxy.mock_log.entries) if proxy.mock_log else 0
        proxy.intercept.hosts.put(host, ChaosProfile.model_validate(profile))

    def outcomes(self) -> list[Outcome]:
        self.proxy.intercept.hosts.remove(self.host)
        return self.proxy.intercept.aftermath.outcomes[self.before :]

    def answered(self) -> int:
        """Requests that reached the mock since the profile was set."""
        assert self.proxy.mock_log is not None
        return len(self.proxy.mock_log.entries) - self.answered_before


def assert_two_retries(faulted: Faulted, honoured: bool | None) -> list[Outcome]:
    outcomes = faulted.outcomes()
    assert [outcome.next for outcome in outcomes] == [Next.RETRIED, Next.RETRIED]
    assert all(outcome.recovered for outcome in outcomes)
    assert faulted.answered() == 1  # the third attempt got the answer: exactly two retries
    assert [outcome.honoured for outcome in outcomes] == [honoured, honoured]
    return outcomes


def test_anthropic_retries_two_529s_after_the_retry_after_sent(proxy: Session) -> None:
    faulted = Faulted(proxy, "api.anthropic.com", errorStatus=529, failRequestCount=2, retryAfter=HINT)
    with anthropic_client(proxy, retries=2) as client:
        message = client.messages.create(
            model="claude-haiku-4-5", max_tokens=32, messages=[{"role": "user", "content": "hello"}]
        )
    assert message.content[0].text == "recovered"
    for outcome in assert_two_retries(faulted, honoured=True):
        assert outcome.fault.status == 529
        assert outcome.retry_after is not None
        assert HINT <= outcome.retry_after < 0.35  # the hint, not the SDK's own backoff


def test_openai_retries_two_429s_after_the_retry_after_sent(proxy: Session) -> None:
    faulted = Faulted(proxy, "api.openai.com", errorStatus=429, failRequestCount=2, retryAfter=str(HINT))
    with openai_client(proxy, retries=2) as client:
        completion = client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}]
        )
    assert completion.choices[0].message.content == "recovered"
    for outcome in assert_two_retries(faulted, honoured=True):
        assert outcome.retry_after is not None
        assert HINT <= outcome.retry_after < 0.35


def test_an_sdk_that_runs_out_of_retries_gives_up(proxy: Session) -> None:
    import anthropic

    faulted = Faulted(proxy, "api.anthropic.com", errorStatus=529, failRequestCount=5, retryAfter=0.05)
    with anthropic_client(proxy, retries=1) as client, pytest.raises(anthropic.InternalServerError) as raised:
        client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    assert raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    retried, gave_up = faulted.outcomes()
    assert (retried.next, gave_up.next) == (Next.RETRIED, Next.GAVE_UP)
    assert faulted.answered() == 0


def test_google_genai_retries_with_its_retry_options(proxy: Session) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    faulted = Faulted(proxy, "generativelanguage.googleapis.com", errorStatus=503, failRequestCount=2)
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.02, jitter=0)
    options = types.HttpOptions(client_args={"proxy": proxy.url, "verify": trusting(proxy)}, retry_options=retry)
    client = genai.Client(api_key="gemini-test", http_options=options)
    try:
        answer = client.models.generate_content(model="gemini-2.5-flash", contents="hello")
    finally:
        client.close()
    assert answer.text == "recovered"
    assert_two_retries(faulted, honoured=None)  # google-genai reads no retry-after: none was sent


def test_boto3_retries_throttling_after_x_amz_retry_after(proxy: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.retries import standard

    # botocore waits max(jitter, x-amz-retry-after): without the jitter the wait is the header's alone
    defaults = standard.ExponentialBackoff.__init__.__defaults__
    assert defaults is not None
    monkeypatch.setattr(standard.ExponentialBackoff.__init__, "__defaults__", (defaults[0], lambda: 0.0, *defaults[2:]))
    faulted = Faulted(
        proxy, "bedrock-runtime.us-east-1.amazonaws.com", errorStatus=429, failRequestCount=2, retryAfter=HINT
    )
    with bedrock_client(proxy, attempts=3) as client:
        done = client.converse(
            modelId="anthropic.claude-haiku-4-5-v1:0", messages=[{"role": "user", "content": [{"text": "hello"}]}]
        )
    assert done["output"]["message"]["content"][0]["text"] == "recovered"
    for outcome in assert_two_retries(faulted, honoured=True):
        assert outcome.retry_after is not None
        assert HINT <= outcome.retry_after < 0.35


def test_a_quotas_headers_count_down_and_its_429_says_when_to_come_back(proxy: Session) -> None:
    import openai

    faulted = Faulted(proxy, "api.openai.com", quotaName="sdk-quota", quotaLimit=2, quotaWindowMillis=1000)
    with openai_client(proxy, retries=0) as client:
        seen = []
        for _ in range(2):
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "count"}]
            )
            seen.append((raw.headers["x-ratelimit-limit-requests"], raw.headers["x-ratelimit-remaining-requests"]))
        assert seen == [("2", "1"), ("2", "0")]
        started = time.monotonic()
        with pytest.raises(openai.RateLimitError) as raised:
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "count"}])
    headers = raised.value.response.headers
    assert headers["x-ratelimit-remaining-requests"] == "0"
    wait = float(headers["retry-after-ms"]) / 1000
    assert 0 < wait <= 1.0
    assert headers["x-ratelimit-reset-requests"] == f"{round(wait * 1000)}ms"  # reset and retry-after agree
    time.sleep(max(0.0, wait - (time.monotonic() - started)) + 0.05)  # the window the headers named has ended
    with openai_client(proxy, retries=0) as client:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "count"}])
    (refused,) = faulted.outcomes()
    assert refused.fault.kind.value == "quota"


def test_a_retry_met_by_the_upstreams_own_error_is_no_recovery(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One injected 529, then the answers themselves fail (500, no fault of llmproxy's): the SDK retries twice and
    gives up. The end-of-run summary says so — never "answered", never "recovered"."""
    import anthropic

    failing = serving(tmp_path_factory, {"expectations": [{"error": {"status": 500}}]})
    proxy = next(failing)
    faulted = Faulted(proxy, "api.anthropic.com", errorStatus=529, failRequestCount=1, retryAfter=0.05)
    with anthropic_client(proxy, retries=2) as client, pytest.raises(anthropic.InternalServerError) as raised:
        client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    assert raised.value.status_code == 500
    (outcome,) = faulted.outcomes()
    assert (outcome.next, outcome.recovered) == (Next.RETRIED, False)
    assert outcome.followed().endswith(", failed again: status 500")
    next(failing, None)  # the session ends: its summary
    assert "answered" not in proxy.summary.split("mock answered")[0]
    assert "the run did not recover: the client gave up on 1 request after 1 fault" in proxy.summary


def test_the_summary_counts_every_fault_and_the_requests_chaos_answered_before_the_mock(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    import anthropic

    session = serving(tmp_path_factory, {"expectations": [{"respond": {"text": "never sent"}}]})
    proxy = next(session)
    assert proxy.intercept is not None
    proxy.intercept.hosts.put("api.anthropic.com", ChaosProfile(errorStatus=529, retryAfter="0.05"))
    with anthropic_client(proxy, retries=2) as client, pytest.raises(anthropic.InternalServerError):
        client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    next(session, None)  # the session ends: its summary
    lines = proxy.summary.splitlines()
    assert lines[0].startswith("injected 3 faults (error 3), seed ")
    assert "the run did not recover: the client gave up on 1 request after 3 faults" in lines
    assert "mock answered 0 of 3 requests (3 answered by an injected fault before reaching the mock)" in lines
