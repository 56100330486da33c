"""What each signal tells the user to do: a title, a recommendation and a structured fix.

A fix's snippet names only fields of the API the calls spoke (each API spells its output cap, its cache
breakpoint, where the model goes, its own way); where that API has nothing to set, the fix is plain advice.
Prompt-caching advice depends on who serves the calls: Anthropic (and Bedrock's Claude) cache only what a
`cache_control` breakpoint marks; OpenAI caches a stable prefix of 1,024 tokens or more by itself; Gemini
caches implicitly on 2.5 models and explicitly through `cachedContents`.
"""

import orjson

from llmproxy.analysis.report import Fix
from llmproxy.analysis.signals import ECONOMY_MODELS
from llmproxy.model import Operation, Provider
from llmproxy.providers.prompt_caching import OPENAI_MINIMUM

DOCS = "docs/report.md"
_ANTHROPIC_CACHING = "https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching"
_OPENAI_CACHING = "https://platform.openai.com/docs/guides/prompt-caching"
_GEMINI_CACHING = "https://ai.google.dev/gemini-api/docs/caching"

_ANTHROPIC_SNIPPET = """{
  "system": [
    {"type": "text", "text": "<the long, unchanging instructions>",
     "cache_control": {"type": "ephemeral"}}
  ]
}"""
_CONVERSE_SNIPPET = """{
  "system": [
    {"text": "<the long, unchanging instructions>"},
    {"cachePoint": {"type": "default"}}
  ]
}"""
_OPENAI_CHAT_SNIPPET = """{
  "model": "<model>",
  "prompt_cache_key": "<one key per agent or user>",
  "messages": [{"role": "system", "content": "<unchanging instructions first, nothing volatile before them>"}]
}"""
_OPENAI_RESPONSES_SNIPPET = """{
  "model": "<model>",
  "prompt_cache_key": "<one key per agent or user>",
  "instructions": "<unchanging instructions first, nothing volatile before them>"
}"""
_GEMINI_SNIPPET = """POST /v1beta/cachedContents
{"model": "models/<model>", "systemInstruction": {"parts": [{"text": "<the long instructions>"}]}, "ttl": "3600s"}
then: {"cachedContent": "cachedContents/<id>", "contents": [...]}"""
_BEDROCK_CACHING = "https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html"
_STABLE_PREFIX = (
    "Put everything that does not change (instructions, tool definitions, examples) first and keep it "
    "byte-identical from call to call"
)

_OUTPUT_CAPS: dict[tuple[Provider, Operation], str] = {
    (Provider.ANTHROPIC, Operation.MESSAGES): '{"max_tokens": 1024}',
    (Provider.BEDROCK, Operation.INVOKE): '{"max_tokens": 1024}',
    (Provider.BEDROCK, Operation.CONVERSE): '{"inferenceConfig": {"maxTokens": 1024}}',
    (Provider.OPENAI, Operation.CHAT_COMPLETIONS): '{"max_completion_tokens": 1024}',
    (Provider.AZURE, Operation.CHAT_COMPLETIONS): '{"max_completion_tokens": 1024}',
    (Provider.OPENAI, Operation.RESPONSES): '{"max_output_tokens": 1024}',
    (Provider.AZURE, Operation.RESPONSES): '{"max_output_tokens": 1024}',
    (Provider.GEMINI, Operation.GENERATE_CONTENT): '{"generationConfig": {"maxOutputTokens": 1024}}',
    (Provider.GEMINI_CODE_ASSIST, Operation.GENERATE_CONTENT): (
        '{"request": {"generationConfig": {"maxOutputTokens": 1024}}}'
    ),
    (Provider.OLLAMA, Operation.CHAT): '{"options": {"num_predict": 1024}}',
    (Provider.OLLAMA, Operation.GENERATE): '{"options": {"num_predict": 1024}}',
    (Provider.COHERE, Operation.CHAT): '{"max_tokens": 1024}',
}
"""Each API's own cap on the answer's length, as its requests spell it."""

_BODY_MODEL = {Provider.ANTHROPIC: "anthropic", Provider.OPENAI: "openai"}
"""APIs whose request body names the model (Gemini, Bedrock and Azure name it in the URL), with the vendor
whose small model `signals.ECONOMY_MODELS` knows."""


def _docs(anchor: str) -> str:
    return f"{DOCS}#{anchor}"


def caching_fix(provider: Provider, operation: Operation, summary: str) -> Fix:
    """How to cache a stable prefix on this API: the field that does it, or plain advice where the API has
    none to set (it caches a stable prefix by itself, or not at all)."""
    if (provider, operation) in ((Provider.ANTHROPIC, Operation.MESSAGES), (Provider.BEDROCK, Operation.INVOKE)):
        action = (
            "Mark the end of the stable prefix (system prompt, tool definitions) with a cache_control "
            "breakpoint; cached reads cost a tenth of the input price."
        )
        docs = _ANTHROPIC_CACHING if provider is Provider.ANTHROPIC else _BEDROCK_CACHING
        return Fix(
            summary=summary, action=action, configSnippet=_ANTHROPIC_SNIPPET, exampleExpectation=None, docsUrl=docs
        )
    if provider is Provider.BEDROCK and operation is Operation.CONVERSE:
        action = "Put a cachePoint block after the stable prefix (system prompt, tool definitions)."
        return Fix(
            summary=summary,
            action=action,
            configSnippet=_CONVERSE_SNIPPET,
            exampleExpectation=None,
            docsUrl=_BEDROCK_CACHING,
        )
    if provider is Provider.GEMINI:
        action = (
            "Keep the system instruction and tools identical and first in every request, or create an explicit "
            "cachedContents entry and refer to it."
        )
        return Fix(
            summary=summary,
            action=action,
            configSnippet=_GEMINI_SNIPPET,
            exampleExpectation=None,
            docsUrl=_GEMINI_CACHING,
        )
    if provider is Provider.OPENAI and operation in (Operation.CHAT_COMPLETIONS, Operation.RESPONSES):
        action = (
            f"{_STABLE_PREFIX}; OpenAI caches a shared prefix of {OPENAI_MINIMUM:,} tokens or more, and "
            "prompt_cache_key keeps one agent's calls on the same cache."
        )
        snippet = _OPENAI_CHAT_SNIPPET if operation is Operation.CHAT_COMPLETIONS else _OPENAI_RESPONSES_SNIPPET
        return Fix(
            summary=summary, action=action, configSnippet=snippet, exampleExpectation=None, docsUrl=_OPENAI_CACHING
        )
    if provider is Provider.OLLAMA:
        action = (
            f"{_STABLE_PREFIX}: Ollama reuses the evaluated prefix while the model stays loaded, so keep it "
            "loaded between calls (keep_alive)."
        )
        return Fix(
            summary=summary, action=action, configSnippet='{"keep_alive": "30m"}', exampleExpectation=None, docsUrl=None
        )
    where = {
        Provider.AZURE: f"; Azure OpenAI caches a shared prefix of {OPENAI_MINIMUM:,} tokens or more by itself.",
        Provider.GEMINI_CODE_ASSIST: "; the Gemini Code Assist back end caches a shared prefix by itself.",
    }.get(provider, ", or send less of it: this API has no prompt cache to turn on.")
    return Fix(
        summary=summary, action=_STABLE_PREFIX + where, configSnippet=None, exampleExpectation=None, docsUrl=None
    )


TITLES = {
    "REPEATED_SYSTEM_PROMPT": "The same system prompt is sent uncached on every call",
    "LARGE_STATIC_CONTEXT_RESENT": "A large context block is re-sent uncached",
    "DETERMINISTIC_TOOL_CALL": "The model is asked to make the same tool call again",
    "OVERSIZED_TOOL_RESULT": "Tool results are larger than the model needs",
    "OUTPUT_TOKEN_BLOAT": "Answers are much longer than the session's norm",
    "DUPLICATE_CONSECUTIVE_CALL": "The same request is sent twice in a row",
    "LOW_CACHE_HIT_RATE": "Little of the prompt is read from the cache",
    "MODEL_OVERSPEND": "Trivial calls go to an expensive model",
    "UNUSED_TOOL_SCHEMA": "Tool definitions are sent that the model never uses",
}


def fix_for(signal: str, provider: Provider, operation: Operation) -> tuple[str, Fix]:
    """The recommendation (one sentence) and the structured fix for a signal on one API's traffic: a snippet
    names only that API's own request fields; where there is none to set, the fix is plain advice."""
    if signal == "REPEATED_SYSTEM_PROMPT":
        fix = caching_fix(provider, operation, "Cache the system prompt")
        return "Cache the repeated system prompt instead of paying full input price for it on every call.", fix
    if signal == "LARGE_STATIC_CONTEXT_RESENT":
        fix = caching_fix(provider, operation, "Cache or fetch large context")
        action = fix.action + " Or give the model a retrieval tool and send the block only when it asks."
        return "Cache the large block, or let the model fetch it on demand.", fix.model_copy(update={"action": action})
    if signal == "LOW_CACHE_HIT_RATE":
        fix = caching_fix(provider, operation, "Enable prompt caching")
        return "Enable prompt caching for the stable prefix of the prompt.", fix
    recommendation, fix = _STATIC[signal]
    if signal == "OUTPUT_TOKEN_BLOAT":
        fix = fix.model_copy(update={"configSnippet": _OUTPUT_CAPS.get((provider, operation))})
    elif signal == "MODEL_OVERSPEND" and provider in _BODY_MODEL:
        snippet = orjson.dumps({"model": ECONOMY_MODELS[_BODY_MODEL[provider]]}).decode()
        fix = fix.model_copy(update={"configSnippet": snippet})
    return recommendation, fix


_STATIC: dict[str, tuple[str, Fix]] = {
    "DETERMINISTIC_TOOL_CALL": (
        "Call the tool directly (or memoise its result) instead of asking the model to decide the same call again.",
        Fix(
            summary="Call deterministic tools directly",
            action=(
                "When the same tool is called with the same arguments, run it from code (an HTTP or MCP call) or "
                "cache its result, and give the model the answer instead of a round trip."
            ),
            configSnippet=None,
            exampleExpectation=(
                '{"conversation": {"turns": [{"respond": {"toolCalls": '
                '[{"name": "<tool>", "arguments": {"<argument>": "<value>"}}]}}]}}'
            ),
            docsUrl=_docs("deterministic_tool_call"),
        ),
    ),
    "OVERSIZED_TOOL_RESULT": (
        "Trim or summarise large tool results before they enter the conversation.",
        Fix(
            summary="Trim oversized tool results",
            action=(
                "Return only what the model needs (the matching lines, the first page, a summary); every token of "
                "a tool result is re-sent on each later turn."
            ),
            configSnippet=None,
            exampleExpectation=None,
            docsUrl=_docs("oversized_tool_result"),
        ),
    ),
    "OUTPUT_TOKEN_BLOAT": (
        "Bound the answer length with the API's output cap or a response format.",
        Fix(
            summary="Cap output length",
            action=(
                "Set the request's output cap near what an answer needs (the field below is this API's), or ask "
                "for a structured response format."
            ),
            configSnippet=None,  # the API's own field: `fix_for`
            exampleExpectation=None,
            docsUrl=_docs("output_token_bloat"),
        ),
    ),
    "DUPLICATE_CONSECUTIVE_CALL": (
        "De-duplicate identical consecutive requests: reuse the first answer.",
        Fix(
            summary="De-duplicate repeated requests",
            action=(
                "A request identical to the one just answered is asked again: cache answers by request, or guard "
                "the retry logic so it retries only after a failure."
            ),
            configSnippet=None,
            exampleExpectation=None,
            docsUrl=_docs("duplicate_consecutive_call"),
        ),
    ),
    "MODEL_OVERSPEND": (
        "Route short, tool-free calls to a smaller model.",
        Fix(
            summary="Switch to a smaller model",
            action=(
                "Calls that answer in a few words without tools (titles, classifications, yes/no checks) rarely need "
                "the largest model: send them to the vendor's small model (claude-haiku-4-5, gpt-5-mini, "
                "gemini-2.5-flash-lite…; in the URL where the API names the model there)."
            ),
            configSnippet=None,  # where the body names the model: `fix_for`
            exampleExpectation=None,
            docsUrl=_docs("model_overspend"),
        ),
    ),
    "UNUSED_TOOL_SCHEMA": (
        "Remove tool definitions the agent never uses from the tools array.",
        Fix(
            summary="Remove unused tools",
            action=(
                "Every tool definition is input on every call: send only the tools a task needs in the request's "
                "tools. A coding agent chooses its own (Claude Code: `--tools` names the built-in ones it offers, "
                'e.g. `--tools "Bash,Read,Edit"`). In a test suite, a tool no test made the model call is one no '
                "test exercises: remove it, or add a test that needs it."
            ),
            configSnippet=None,
            exampleExpectation=None,
            docsUrl=_docs("unused_tool_schema"),
        ),
    ),
}
