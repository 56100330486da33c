"""The request headers a recorder must never store as-is and a replayer must never match on.

Bedrock requests are signed with SigV4: the signature, the signing time, the session token and the payload
hash change on every request (or are secret), and llmproxy never re-signs anything. The SDKs add their own
per-request ids beside them.
"""

from typing import Final

SIGV4_HEADERS: Final = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})
"""Secret or per-request: redact when recording, ignore when matching, never forward a stale copy."""

VOLATILE_HEADERS: Final = SIGV4_HEADERS | {"amz-sdk-invocation-id", "amz-sdk-request", "x-amzn-trace-id"}
"""Everything that differs between two otherwise identical Bedrock requests."""
