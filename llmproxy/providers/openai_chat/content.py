"""What an assistant message (or a stream delta) says, however a compatible server spells it.

OpenAI sends `content` as a string. Mistral sends a list of parts, `text` and `thinking` (whose `thinking` is
itself a list of text parts). Reasoning models behind compatible APIs send their reasoning beside the
content: `reasoning_content` (DeepSeek, Z.ai, vLLM), `reasoning` (OpenRouter, Groq, Cerebras, Ollama) and
OpenRouter's `reasoning_details` (text, summaries and encrypted blocks, whose `data` or `signature` is the
token to send back). All of it reads as text and reasoning; nothing here is fatal.
"""

from dataclasses import dataclass, field

from llmproxy.providers.node import Node


@dataclass(slots=True)
class Said:
    """Text and reasoning pieces of one message or delta, in arrival order."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    signature: str | None = None


def read(node: Node, into: Said) -> None:
    """Add what a message or delta says to `into`."""
    _content(node["content"], into)
    plain = node.first("reasoning_content", "reasoning")
    if plain.is_string():
        into.reasoning.append(plain.string())
    for detail in node["reasoning_details"].items() if node["reasoning_details"].is_list() else ():
        if not isinstance(detail.value, dict):
            continue
        if not plain.is_string():  # the same text as `reasoning`, when both are sent
            piece = detail.first("text", "summary")
            if piece.is_string():
                into.reasoning.append(piece.string())
        token = detail.first("signature", "data")
        if token.is_string() and token.string():
            into.signature = token.string()


def _content(content: Node, into: Said) -> None:
    if content.is_string():
        into.text.append(content.string())
        return
    if not content.is_list():
        if content.present:
            raise content.fail("a string or a list of content parts")
        return
    for part in content.items():
        if part.is_string():
            into.text.append(part.string())
            continue
        kind = part["type"].opt_string()
        if kind == "thinking":
            thinking = part["thinking"]
            if thinking.is_string():
                into.reasoning.append(thinking.string())
            else:
                into.reasoning.extend(p["text"].string() for p in thinking.items() if p["text"].is_string())
        elif part["text"].is_string():  # text, output_text, and parts of kinds yet unknown that carry text
            into.text.append(part["text"].string())
