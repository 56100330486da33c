"""`retry-after` as an injected error sends it: seconds, or the HTTP date a profile gave literally.

Seconds go out as `retry-after` (whole seconds, rounded up: a client never retries early) and `retry-after-ms`
(exact: the Stainless SDKs read it first, so a 0.2 s hint keeps a test fast). A date is sent as given, which
is what a client that parses dates must handle.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from llmproxy.intercept.profile import retry_after_text
from llmproxy.providers.base import retry_after_headers


@dataclass(frozen=True, slots=True)
class RetryAfter:
    seconds: float  # from now; a date in the past is 0
    date: str | None = None  # the HTTP date, when it was given as one

    def headers(self) -> dict[str, str]:
        if self.date is not None:
            return {"retry-after": self.date}
        return retry_after_headers(self.seconds)


def retry_after(value: str | float | None, now: datetime) -> RetryAfter | None:
    """A profile's `retryAfter` at instant `now`; None when it has none."""
    if value is None:
        return None
    if not isinstance(value, str):
        return RetryAfter(float(value))
    text = retry_after_text(value)
    if text[0].isdigit():
        return RetryAfter(float(text))
    when = parsedate_to_datetime(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return RetryAfter(max(0.0, (when - now).total_seconds()), text)
