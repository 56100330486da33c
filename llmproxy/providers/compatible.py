"""Vendors that serve another provider's API (mostly OpenAI's), known by host: who serves a request, so that
a cassette and a report name DeepSeek, not just "openai", and prices are looked up for the right vendor.

Each entry is the vendor's documented base URL. Requests to these hosts are recognised by the API's paths
with or without the `/v1` prefix (`api.deepseek.com/responses`); loopback servers are known by their
default port. docs/providers.md lists the table.
"""

import functools
import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Vendor:
    name: str  # as cassettes and reports spell it
    label: str
    base_url: str  # the documented OpenAI-compatible base URL
    hosts: tuple[str, ...] = ()  # served on these hosts and their subdomains
    host_pattern: re.Pattern[str] | None = None  # hosts named by region
    port: int | None = None  # a loopback server on its default port
    note: str = ""
    under: str = ""  # on a host that also serves the vendor's own API: the compatible API's paths start here

    def speaks_compatible(self, host: str, path: str | None) -> bool:
        """Whether a request to `host` at `path` (None: any) is to the vendor's compatible API (remote
        vendors)."""
        return self.port is None and self.serves(host, None) and (path is None or path.startswith(self.under))

    def serves(self, host: str, port: int | None) -> bool:
        if self.port is not None:
            return port == self.port and host in LOOPBACK_HOSTS
        if self.host_pattern is not None and self.host_pattern.search(host):
            return True
        return any(host == h or host.endswith("." + h) for h in self.hosts)


LOOPBACK_HOSTS: Final = ("localhost", "127.0.0.1", "::1")

VENDORS: Final[tuple[Vendor, ...]] = (
    Vendor("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", ("openrouter.ai",)),
    Vendor("groq", "Groq", "https://api.groq.com/openai/v1", ("api.groq.com",)),
    Vendor(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com",
        ("api.deepseek.com",),
        note="also `/v1`; Anthropic's API at `/anthropic`",
    ),
    Vendor("xai", "xAI", "https://api.x.ai/v1", ("api.x.ai",)),
    Vendor(
        "mistral",
        "Mistral",
        "https://api.mistral.ai/v1",
        ("api.mistral.ai",),
        note="answers' `content` may be a list of text and thinking parts",
    ),
    Vendor("together", "Together AI", "https://api.together.xyz/v1", ("api.together.xyz", "api.together.ai")),
    Vendor("fireworks", "Fireworks AI", "https://api.fireworks.ai/inference/v1", ("api.fireworks.ai",)),
    Vendor("cerebras", "Cerebras", "https://api.cerebras.ai/v1", ("api.cerebras.ai",)),
    Vendor(
        "huggingface",
        "Hugging Face Inference Providers",
        "https://router.huggingface.co/v1",
        ("router.huggingface.co", "api-inference.huggingface.co"),
        note="also `/{provider}/v1` (`/together/v1`, `/nebius/v1`…)",
    ),
    Vendor("perplexity", "Perplexity", "https://api.perplexity.ai", ("api.perplexity.ai",)),
    Vendor("moonshot", "Moonshot AI (Kimi)", "https://api.moonshot.ai/v1", ("api.moonshot.ai", "api.moonshot.cn")),
    Vendor(
        "zai",
        "Z.ai (GLM)",
        "https://api.z.ai/api/paas/v4",
        ("api.z.ai", "open.bigmodel.cn"),
        note="and `/api/anthropic`",
    ),
    Vendor(
        "nebius",
        "Nebius AI Studio",
        "https://api.studio.nebius.com/v1",
        ("api.studio.nebius.com", "api.studio.nebius.ai"),
    ),
    Vendor("sambanova", "SambaNova", "https://api.sambanova.ai/v1", ("api.sambanova.ai",)),
    Vendor("deepinfra", "DeepInfra", "https://api.deepinfra.com/v1/openai", ("api.deepinfra.com",)),
    Vendor("novita", "Novita AI", "https://api.novita.ai/v3/openai", ("api.novita.ai",)),
    Vendor(
        "alibaba",
        "Alibaba Cloud Model Studio (Qwen)",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        ("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"),
    ),
    Vendor(
        "github",
        "GitHub Models",
        "https://models.github.ai/inference",
        ("models.github.ai", "models.inference.ai.azure.com"),
    ),
    Vendor("vercel", "Vercel AI Gateway", "https://ai-gateway.vercel.sh/v1", ("ai-gateway.vercel.sh",)),
    Vendor("heroku", "Heroku Managed Inference", "https://us.inference.heroku.com/v1", ("inference.heroku.com",)),
    Vendor("crusoe", "Crusoe Cloud", "https://api.inference.crusoecloud.com/v1", ("api.inference.crusoecloud.com",)),
    Vendor(
        "bedrock",
        "Amazon Bedrock (OpenAI-compatible)",
        "https://bedrock-mantle.{region}.api.aws/v1",
        note="also `/openai/v1`",
        host_pattern=re.compile(r"(^|\.)bedrock-mantle\.[a-z0-9-]+\.api\.aws$"),
    ),
    Vendor(
        "gemini",
        "Gemini (OpenAI-compatible)",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        ("generativelanguage.googleapis.com",),
        under="/v1beta/openai/",
    ),
    Vendor(
        "cohere",
        "Cohere (compatibility API)",
        "https://api.cohere.ai/compatibility/v1",
        ("api.cohere.ai", "api.cohere.com"),
        under="/compatibility/",
    ),
    Vendor("ollama", "Ollama Cloud", "https://ollama.com/v1", ("ollama.com",), note="and its native `/api/chat`"),
    Vendor("ollama", "Ollama", "http://localhost:11434/v1", port=11434, note="and its native `/api/chat`"),
    Vendor("lmstudio", "LM Studio", "http://localhost:1234/v1", port=1234),
    Vendor("vllm", "vLLM", "http://localhost:8000/v1", port=8000),
)


@functools.lru_cache(maxsize=1024)
def vendor_of(host: str, port: int | None = None) -> str | None:
    """The vendor serving `host` (lower case, no trailing dot) on `port`, or None for hosts not in the table."""
    return next((vendor.name for vendor in VENDORS if vendor.serves(host, port)), None)


def is_compatible_host(host: str, path: str | None = None) -> bool:
    """Whether `host` is a remote vendor's and `path` (None: any) its compatible API's, whose paths are
    recognised with or without `/v1` (Gemini's host serves the Gemini API beside it: there only
    `/v1beta/openai/…` is)."""
    return any(vendor.speaks_compatible(host, path) for vendor in VENDORS)
