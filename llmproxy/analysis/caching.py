"""The shortest prompt prefix each provider caches, per model: below it a provider caches nothing, whatever the
request asks, so the report never recommends caching a prompt shorter than its model's minimum.

The figures are the providers' own documentation (late 2026):

* Anthropic (the Messages API, and Claude on Bedrock and Vertex): 1,024 tokens for Claude Sonnet 3.7, 4, 4.5
  and 4.6 and Opus 4 and 4.1; 2,048 for Haiku 3 and 3.5; 4,096 for Opus 4.5 and 4.6 and Haiku 4.5
  (https://platform.claude.com/docs/en/build-with-claude/prompt-caching).
* OpenAI (and Azure OpenAI): every model caches a prompt of 1,024 tokens or more by itself
  (https://platform.openai.com/docs/guides/prompt-caching).
* Gemini: implicit caching from 2,048 tokens for Gemini 2.5 Flash and Pro, 4,096 for the newer models
  (https://ai.google.dev/gemini-api/docs/caching).

A Claude or Gemini model the table does not name gets its family's largest documented minimum (4,096): a
newer model's minimum has only ever gone up or stayed, and advice to cache a prompt the provider would not
cache is worse than no advice. Other APIs (Ollama's loaded model, Cohere, the OpenAI-compatible vendors)
document no minimum; 1,024 tokens stands for "long enough to be worth caching or shortening".
"""

import functools
import re
from typing import Final

from llmproxy.model import Provider

OPENAI_MINIMUM: Final = 1_024
DEFAULT_MINIMUM: Final = 1_024  # an API that documents none: the shortest prefix worth caching or shortening
CLAUDE_LARGEST: Final = 4_096  # a Claude model the table does not name
GEMINI_LARGEST: Final = 4_096  # a Gemini model the table does not name

_CLAUDE: Final = {
    ("sonnet", "3"): 1_024,
    ("sonnet", "3-5"): 1_024,
    ("sonnet", "3-7"): 1_024,
    ("sonnet", "4"): 1_024,
    ("sonnet", "4-0"): 1_024,
    ("sonnet", "4-5"): 1_024,
    ("sonnet", "4-6"): 1_024,
    ("opus", "3"): 1_024,
    ("opus", "4"): 1_024,
    ("opus", "4-0"): 1_024,
    ("opus", "4-1"): 1_024,
    ("opus", "4-5"): 4_096,
    ("opus", "4-6"): 4_096,
    ("haiku", "3"): 2_048,
    ("haiku", "3-5"): 2_048,
    ("haiku", "4-5"): 4_096,
}
"""Claude's minimums by (family, version): `claude-sonnet-4-5`, `claude-3-5-haiku`, `anthropic.claude-opus-4-1-…`."""

_GEMINI: Final = {("2-5", "flash"): 2_048, ("2-5", "pro"): 2_048}
"""Gemini's implicit-caching minimums by (version, family); Flash-Lite and the newer models are not listed."""

_CLAUDE_NAME: Final = re.compile(
    r"claude-(?:(?P<family>opus|sonnet|haiku)-(?P<version>\d+(?:-\d)?)(?!\d)"
    r"|(?P<old_version>\d(?:-\d)?)-(?P<old_family>opus|sonnet|haiku))"
)
_GEMINI_NAME: Final = re.compile(r"gemini-(?P<version>\d+(?:-\d+)?)-(?P<family>flash|pro)(?P<variant>-lite)?")


@functools.cache  # a run has a few models and many calls
def caching_minimum(model: str | None, provider: Provider) -> int:
    """The fewest prompt tokens `model` caches, served through `provider`'s API."""
    name = (model or "").lower().replace(".", "-")
    if "claude" in name:
        claude = _CLAUDE_NAME.search(name)
        if claude is None:
            return CLAUDE_LARGEST
        family = claude["family"] or claude["old_family"]
        return _CLAUDE.get((family, claude["version"] or claude["old_version"]), CLAUDE_LARGEST)
    if "gemini" in name:
        gemini = _GEMINI_NAME.search(name)
        if gemini is None or gemini["variant"]:
            return GEMINI_LARGEST
        return _GEMINI.get((gemini["version"], gemini["family"]), GEMINI_LARGEST)
    if provider in (Provider.OPENAI, Provider.AZURE):
        return OPENAI_MINIMUM
    return DEFAULT_MINIMUM
