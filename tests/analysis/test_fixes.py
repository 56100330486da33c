"""Each signal's fix names only settings that exist in what it addresses: a request field of the API the
calls spoke (proved by decoding the snippet, merged into a request of that API, with llmproxy's codec for it,
or by the field being in the official SDK's request type), a llmproxy mock expectation, or a coding CLI's
option — else it gives plain advice without a snippet."""

import shutil
import subprocess
import typing
from typing import Any

import orjson
import pytest

from llmproxy.analysis.fixes import TITLES, fix_for
from llmproxy.analysis.signals import ECONOMY_MODELS
from llmproxy.mock.spec import ExpectationsFile
from llmproxy.model import Conversation, Operation, Provider
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect
from tests.analysis.reports import ROOT
from tests.samples import CHAT

APIS = {(route.provider, route.operation): sample for sample in CHAT if (route := detect(sample.host, sample.path))}
CACHING = ("REPEATED_SYSTEM_PROMPT", "LARGE_STATIC_CONTEXT_RESENT", "LOW_CACHE_HIT_RATE")
_VENDOR = {Provider.ANTHROPIC: "anthropic", Provider.OPENAI: "openai"}


def merged(base: Any, snippet: Any) -> Any:
    if isinstance(base, dict) and isinstance(snippet, dict):
        return {**base, **{key: merged(base.get(key), value) for key, value in snippet.items()}}
    return snippet


def decoded(api: tuple[Provider, Operation], snippet: dict[str, Any]) -> Conversation:
    sample = APIS[api]
    route = detect(sample.host, sample.path)
    assert route is not None
    return chat_codec(route).decode_request(orjson.dumps(merged(sample.body, snippet)))


def sdk_fields(api: tuple[Provider, Operation]) -> set[str]:
    """The top-level request fields the official SDK sends for an API that llmproxy's codec does not read
    them all of (prompt-cache keys, model residency)."""
    if api[0] in (Provider.OPENAI, Provider.AZURE) and api[1] is Operation.CHAT_COMPLETIONS:
        from openai.types.chat import completion_create_params

        return set(typing.get_type_hints(completion_create_params.CompletionCreateParamsBase))
    if api[0] in (Provider.OPENAI, Provider.AZURE) and api[1] is Operation.RESPONSES:
        from openai.types.responses import response_create_params

        return set(typing.get_type_hints(response_create_params.ResponseCreateParamsBase))
    if api[0] is Provider.OLLAMA:
        from ollama._types import ChatRequest, GenerateRequest

        return set((ChatRequest if api[1] is Operation.CHAT else GenerateRequest).model_fields)
    raise AssertionError(f"no SDK reading for {api}")


@pytest.mark.parametrize("api", sorted(APIS, key=str), ids=lambda api: f"{api[0].value}-{api[1].value}")
@pytest.mark.parametrize("signal", sorted(TITLES))
def test_each_fix_names_only_what_its_api_reads(signal: str, api: tuple[Provider, Operation]) -> None:
    recommendation, fix = fix_for(signal, *api)
    prose = " ".join([recommendation, fix.summary, fix.action, fix.configSnippet or ""])
    assert "max_output_chars" not in prose  # a setting no tool has
    assert "head_and_tail" not in prose
    if fix.exampleExpectation is not None:  # a llmproxy mock expectation, as `llmproxy mock` reads one
        ExpectationsFile.model_validate({"expectations": [orjson.loads(fix.exampleExpectation)]})
    if fix.configSnippet is None:
        return
    if signal in CACHING and api == (Provider.GEMINI, Operation.GENERATE_CONTENT):
        types = pytest.importorskip("google.genai.types")

        assert "cachedContents" in fix.configSnippet
        assert types.GenerateContentConfig.model_fields["cached_content"].alias == "cachedContent"
        assert '"cachedContent"' in fix.configSnippet
        return
    snippet = orjson.loads(fix.configSnippet)
    conversation = decoded(api, snippet)
    if signal == "OUTPUT_TOKEN_BLOAT":
        assert conversation.max_output_tokens == 1024
    elif signal == "MODEL_OVERSPEND":
        assert conversation.model == ECONOMY_MODELS[_VENDOR[api[0]]]
    elif signal in CACHING and api[0] in (Provider.ANTHROPIC, Provider.BEDROCK):
        assert any(part.cache_control is not None for part in conversation.system)
    elif signal in CACHING:
        assert set(snippet) <= sdk_fields(api)
    else:
        raise AssertionError(f"{signal} on {api}: a snippet nothing checks")


def test_the_claude_code_option_a_fix_names_exists() -> None:
    claude = shutil.which("claude", path=str(ROOT / "node_modules" / ".bin"))
    if claude is None:
        pytest.skip("Claude Code is not installed (npm)")
    _, fix = fix_for("UNUSED_TOOL_SCHEMA", Provider.ANTHROPIC, Operation.MESSAGES)
    assert "`--tools`" in fix.action
    shown = subprocess.run([claude, "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "--tools <tools...>" in shown
