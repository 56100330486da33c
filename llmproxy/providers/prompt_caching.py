"""What a provider's prompt cache does for one model, as the provider documents it (docs/providers.md#prompt-caching):
the shortest prompt it caches, how a cache entry is written and read, and what the usage reports of it. One
table for llmproxy: the stand-in upstream reports the cache reads and writes a real provider would by it
(`mock.prompt_cache`), and the report advises caching only a prompt its model would cache (`analysis.signals`).
Each provider package declares its API's rules in its facts (`registry.facts(provider).prompt_caching`).

* Claude (the Messages API, Bedrock, Vertex; the minimums apply on every platform): only where the client
  marks the prompt (`cache_control`, Bedrock's `cachePoint`); an earlier write is found at a breakpoint or up
  to 20 blocks before one. The input count leaves the cache reads and writes out. The block Claude Code puts
  first in its system prompt, `x-anthropic-billing-header: …`, differs on every request; the API reads it as
  billing metadata, so it is no part of the cached prefix.
* OpenAI (Chat Completions, Responses; Azure alike): by itself, the longest prefix an earlier prompt shared.
  Models before GPT-5.6 report `cached_tokens` rounded down to a multiple of 128 tokens and no writes; GPT-5.6
  and later report the exact prefix read, and what a request wrote in `cache_write_tokens`. The input count
  includes both.
* Gemini (and Code Assist): implicit caching on Gemini 2.5 and later, the shared prefix reported in
  `cachedContentTokenCount`, within `promptTokenCount`; an earlier model caches only what the client puts in a
  `cachedContents` entry.

A model the tables do not name — one newer than the documentation, or a name llmproxy cannot read — gets the
largest minimum its provider documents: advice to cache a prompt the provider would not cache is worse than
none, and a stand-in that caches less than the provider would is the lesser error. Models a provider dropped
from its table keep the figure it last documented for them.
"""

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

ANTHROPIC_LOOKBACK: Final = 20  # blocks before a breakpoint within which Anthropic still finds an earlier write
OPENAI_STEP: Final = 128  # models before GPT-5.6 report cached tokens in whole steps of this many
BILLING_HEADER: Final = "x-anthropic-billing-header:"  # Claude Code's per-request block, read as metadata
UNDOCUMENTED_MINIMUM: Final = 1_024
"""An API without a prompt cache llmproxy knows (Ollama keeps the evaluated prefix of a loaded model; Cohere and
the OpenAI-compatible vendors document no minimum): the shortest prompt worth caching or shortening."""


class Writes(StrEnum):
    """Where a provider writes what a later request can read."""

    BREAKPOINTS = "breakpoints"  # where the client marks the prompt, and nowhere else
    SHARED_PREFIX = "shared prefix"  # every prompt long enough, by itself
    EXPLICIT = "explicit"  # only in a cache the client creates and names in its requests
    NONE = "none"  # no prompt cache llmproxy knows of


@dataclass(frozen=True, slots=True)
class PromptCaching:
    """How one model's prompts are cached on one API."""

    minimum: int  # the fewest prompt tokens it caches: a shorter prompt, or breakpoint, caches nothing
    writes: Writes
    step: int = 1  # reads are reported in whole steps of this many tokens above the minimum
    reports_writes: bool = False  # the usage says what a request wrote to the cache
    lookback: int = 0  # blocks before a breakpoint within which an earlier write is still found
    metadata: str | None = None  # a text block starting with this is read as metadata: no part of the prefix


_CLAUDE: Final = {
    # the documentation's current table
    **dict.fromkeys([("opus", "5-5"), ("opus", "5"), ("sonnet", "5-5"), ("haiku", "5-5")], 512),
    **dict.fromkeys([("fable", "5-1"), ("fable", "5"), ("mythos", "5-1"), ("mythos", "5")], 512),
    **dict.fromkeys([("opus", "4-8"), ("opus", "4-1"), ("opus", "4"), ("opus", "4-0")], 1_024),
    **dict.fromkeys([("sonnet", "5"), ("sonnet", "4-6"), ("sonnet", "4-5"), ("sonnet", "4"), ("sonnet", "4-0")], 1_024),
    **dict.fromkeys([("opus", "4-7"), ("mythos", "preview"), ("haiku", "3-5")], 2_048),
    **dict.fromkeys([("opus", "4-6"), ("opus", "4-5"), ("haiku", "4-5")], 4_096),
    # retired models, as the documentation last listed them
    **dict.fromkeys([("sonnet", "3-7"), ("sonnet", "3-5"), ("opus", "3")], 1_024),
    ("haiku", "3"): 2_048,
}
"""Claude's minimums by (family, version): `claude-opus-5-5`, `claude-3-5-haiku-20241022`,
`anthropic.claude-haiku-4-5-20251001-v1:0`, `claude-opus-4-5@20251101`."""
_CLAUDE_LARGEST: Final = max(_CLAUDE.values())

_GEMINI: Final = {
    **dict.fromkeys([("2-5", "flash"), ("2-5", "pro")], 2_048),
    **dict.fromkeys([("3-5", "flash"), ("3-6", "flash"), ("3-7", "flash"), ("3-8", "flash")], 4_096),
    **dict.fromkeys([("3-1", "pro"), ("3", "pro")], 4_096),
    ("3", "flash"): 1_024,  # Gemini 3 Flash, as the documentation last listed it
}
"""Gemini's implicit-caching minimums by (version, family): `gemini-2.5-flash`, `gemini-3.1-pro-preview`."""
_GEMINI_LARGEST: Final = max(_GEMINI.values())

OPENAI_MINIMUM: Final = 1_024  # GPT-5.6 and later; earlier models "vary by request settings" from it

_CLAUDE_NAME: Final = re.compile(
    r"claude-(?:(?P<family>opus|sonnet|haiku|fable|mythos)-(?P<version>\d+(?:-\d)?(?!\d)|preview)"
    r"|(?P<old_version>\d(?:-\d)?)-(?P<old_family>opus|sonnet|haiku))"
)
_GEMINI_NAME: Final = re.compile(r"gemini-(?P<version>\d+(?:-\d+)?)-(?P<family>[a-z]+)(?P<variant>-lite)?")
_GPT_VERSION: Final = re.compile(r"gpt-(?P<major>\d+)(?:-(?P<minor>\d{1,2})(?!\d))?")  # not a date: gpt-5-2025-08-07


def _name(model: str) -> str:
    return model.lower().replace(".", "-")


@functools.cache  # a run has a few models and many calls
def claude(model: str) -> PromptCaching:
    """Claude's rules, on the Messages API and on Bedrock and Vertex alike."""
    found = _CLAUDE_NAME.search(_name(model))
    key = (found["family"] or found["old_family"], found["version"] or found["old_version"]) if found else None
    minimum = _CLAUDE.get(key, _CLAUDE_LARGEST) if key else _CLAUDE_LARGEST
    return PromptCaching(
        minimum, Writes.BREAKPOINTS, reports_writes=True, lookback=ANTHROPIC_LOOKBACK, metadata=BILLING_HEADER
    )


@functools.cache
def openai(model: str) -> PromptCaching:
    """OpenAI's rules (Azure OpenAI's alike): exact reads and reported writes from GPT-5.6 on."""
    found = _GPT_VERSION.search(_name(model))
    version = (int(found["major"]), int(found["minor"] or 0)) if found else (0, 0)
    if version >= (5, 6):
        return PromptCaching(OPENAI_MINIMUM, Writes.SHARED_PREFIX, reports_writes=True)
    return PromptCaching(OPENAI_MINIMUM, Writes.SHARED_PREFIX, step=OPENAI_STEP)


@functools.cache
def gemini(model: str) -> PromptCaching:
    """Gemini's rules, on the Gemini API and the Code Assist back end: implicit caching from Gemini 2.5."""
    found = _GEMINI_NAME.search(_name(model))
    if found is None:
        return PromptCaching(_GEMINI_LARGEST, Writes.SHARED_PREFIX)
    major, _, minor = found["version"].partition("-")
    implicit = (int(major), int(minor or 0)) >= (2, 5)
    key = (found["version"], found["family"])
    minimum = _GEMINI.get(key, _GEMINI_LARGEST) if not found["variant"] else _GEMINI_LARGEST
    return PromptCaching(minimum, Writes.SHARED_PREFIX if implicit else Writes.EXPLICIT)


def no_prompt_cache(model: str) -> PromptCaching:
    """An API without a prompt cache llmproxy knows: nothing cached, caching advised from 1,024 tokens."""
    del model
    return _NO_PROMPT_CACHE


_NO_PROMPT_CACHE: Final = PromptCaching(UNDOCUMENTED_MINIMUM, Writes.NONE)
