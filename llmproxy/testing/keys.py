"""Placeholder API keys for a test that replays. CI replays cassettes with no key, but the official SDKs refuse to
make a client without one (OpenAI's "Missing credentials", Anthropic's "Could not resolve authentication
method") before a request is sent, so a test that replays gets a placeholder in each provider's key variable
that is unset. A replay never sends it anywhere: the cassette answers, and a request with no recording is
refused. It is set in this process's environment for the test's duration only (the plugin puts the environment
back when the test ends), never on disk; a test that records gets none, so that a missing real key fails as it
would without llmproxy, and no placeholder can reach a cassette."""

from collections.abc import Mapping
from typing import Final

PLACEHOLDER: Final = "llmproxy-replay-placeholder-key"

# The variables each SDK reads its key from when a client is made without one, the one a placeholder goes in
# first. A provider is given a placeholder only when all of its variables are unset: a test's own key or token
# is its own (Anthropic's SDK authenticates with ANTHROPIC_AUTH_TOKEN alone; google-genai reads GOOGLE_API_KEY
# as well as GEMINI_API_KEY, and warns when both are set).
SDK_KEY_VARIABLES: Final[tuple[tuple[str, ...], ...]] = (
    ("OPENAI_API_KEY",),  # openai (OpenAI, AsyncOpenAI)
    ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN"),  # openai (AzureOpenAI)
    ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),  # anthropic
    ("GEMINI_API_KEY", "GOOGLE_API_KEY"),  # google-genai
    ("CO_API_KEY",),  # cohere
    ("VOYAGE_API_KEY",),  # voyageai
)


def placeholder_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """The placeholder for each SDK whose key variables `environ` leaves all unset (an empty value counts as
    unset: the SDKs refuse it too), by variable."""
    return {names[0]: PLACEHOLDER for names in SDK_KEY_VARIABLES if not any(environ.get(name) for name in names)}
