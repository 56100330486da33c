"""What llmproxy knows about one API beyond its wire format: the facts other parts act on, declared by each
provider package beside its codecs and reached through the registry (`registry.facts`, `registry.history_paths`).

* `volatile`: JSON paths of request fields that differ between two runs of the same program (a session id,
  a user id for abuse tracking); replay matching leaves them out (docs/replay.md#matching).
* `history`: where a request carries the conversation so far; a cassette stores each shared prefix once.
* `input_excludes_cache`: whether the API's input token count leaves out cache reads and writes (Anthropic's
  `input_tokens`), where others count the whole prompt (OpenAI's `prompt_tokens`).
* `prompt_caching`: how a model's prompts are cached on the API, by model name
  (llmproxy.providers.prompt_caching, docs/providers.md#prompt-caching).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from llmproxy.model import Provider
from llmproxy.providers.prompt_caching import PromptCaching, no_prompt_cache


@dataclass(frozen=True, slots=True)
class ProviderFacts:
    provider: Provider | None  # None: what llmproxy knows of an API it does not know — nothing
    volatile: tuple[str, ...] = ()
    history: tuple[tuple[str, ...], ...] = ()
    input_excludes_cache: bool = False
    prompt_caching: Callable[[str], PromptCaching] = no_prompt_cache

    def merged(self, other: "ProviderFacts") -> "ProviderFacts":
        """One provider's facts declared by two of its APIs (OpenAI's Chat Completions and Responses)."""
        return ProviderFacts(
            self.provider,
            _union(self.volatile, other.volatile),
            _union(self.history, other.history),
            self.input_excludes_cache or other.input_excludes_cache,
            self.prompt_caching if self.prompt_caching is not no_prompt_cache else other.prompt_caching,
        )


def _union[T](first: Iterable[T], second: Iterable[T]) -> tuple[T, ...]:
    return tuple(dict.fromkeys((*first, *second)))
