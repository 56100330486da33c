"""Anthropic Messages (wire-formats.md §2): request decoding, responses and streams both ways, errors."""

from llmproxy.providers.anthropic.codec import MessagesCodec
from llmproxy.providers.base import ChatCodec

MESSAGES: ChatCodec = MessagesCodec()

__all__ = ["MESSAGES", "MessagesCodec"]
