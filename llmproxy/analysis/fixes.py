"""What each signal tells the user to do: a title, a recommendation and a structured fix.

Prompt-caching advice depends on who serves the calls: Anthropic (and Bedrock's Claude) cache only what a
`cache_control` breakpoint marks; OpenAI caches a stable prefix of 1,024 tokens or more by itself; Gemini
caches implicitly on 2.5 models and explicitly through `cachedContents`.
"""

from llmproxy.analysis.report import Fix
from llmproxy.model import Provider

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
_OPENAI_SNIPPET = """{
  "model": "<model>",
  "prompt_cache_key": "<one key per agent or user>",
  "messages": [{"role": "system", "content": "<unchanging instructions first, nothing volatile before them>"}]
}"""
_GEMINI_SNIPPET = """POST /v1beta/cachedContents
{"model": "models/<model>", "systemInstruction": {"parts": [{"text": "<the long instructions>"}]}, "ttl": "3600s"}
then: {"cachedContent": "cachedContents/<id>", "contents": [...]}"""


def _docs(anchor: str) -> str:
    return f"{DOCS}#{anchor}"


def caching_fix(provider: Provider, summary: str) -> Fix:
    if provider in (Provider.ANTHROPIC, Provider.BEDROCK):
        action = (
            "Mark the end of the stable prefix (system prompt, tool definitions) with a cache_control "
            "breakpoint; cached reads cost a tenth of the input price."
        )
        return Fix(
            summary=summary,
            action=action,
            configSnippet=_ANTHROPIC_SNIPPET,
            exampleExpectation=None,
            docsUrl=_ANTHROPIC_CACHING,
        )
    if provider in (Provider.GEMINI, Provider.GEMINI_CODE_ASSIST):
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
    action = (
        "Put everything that does not change (instructions, tool definitions, examples) first and keep it "
        "byte-identical; OpenAI caches a shared prefix of 1,024 tokens or more, and prompt_cache_key keeps "
        "one agent's calls on the same cache."
    )
    return Fix(
        summary=summary, action=action, configSnippet=_OPENAI_SNIPPET, exampleExpectation=None, docsUrl=_OPENAI_CACHING
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


def fix_for(signal: str, provider: Provider) -> tuple[str, Fix]:
    """The recommendation (one sentence) and the structured fix for a signal on a provider's traffic."""
    if signal == "REPEATED_SYSTEM_PROMPT":
        fix = caching_fix(provider, "Cache the system prompt")
        return "Cache the repeated system prompt instead of paying full input price for it on every call.", fix
    if signal == "LARGE_STATIC_CONTEXT_RESENT":
        fix = caching_fix(provider, "Cache or fetch large context")
        action = fix.action + " Or give the model a retrieval tool and send the block only when it asks."
        return "Cache the large block, or let the model fetch it on demand.", fix.model_copy(update={"action": action})
    if signal == "LOW_CACHE_HIT_RATE":
        return "Enable prompt caching for the stable prefix of the prompt.", caching_fix(
            provider, "Enable prompt caching"
        )
    return _STATIC[signal]


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
            configSnippet='{"max_output_chars": 4000, "truncate": "head_and_tail"}',
            exampleExpectation=None,
            docsUrl=_docs("oversized_tool_result"),
        ),
    ),
    "OUTPUT_TOKEN_BLOAT": (
        "Bound the answer length with max_tokens or a response format.",
        Fix(
            summary="Cap output length",
            action=(
                "Set max_tokens (max_output_tokens) near what an answer needs, or ask for a structured response format."
            ),
            configSnippet='{"max_tokens": 1024}',
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
                "the largest model: send them to the vendor's small model."
            ),
            configSnippet='{"model": "<the vendor\'s small model, e.g. claude-haiku-4-5 or gpt-5-mini>"}',
            exampleExpectation=None,
            docsUrl=_docs("model_overspend"),
        ),
    ),
    "UNUSED_TOOL_SCHEMA": (
        "Remove tool definitions the agent never uses from the tools array.",
        Fix(
            summary="Remove unused tools",
            action=(
                "Every tool definition is input on every call. Offer only the tools a task needs (for Claude Code: "
                "--allowedTools / --disallowedTools or permissions in settings.json)."
            ),
            configSnippet='{"permissions": {"deny": ["<unused tool>"]}}',
            exampleExpectation=None,
            docsUrl=_docs("unused_tool_schema"),
        ),
    ),
}
