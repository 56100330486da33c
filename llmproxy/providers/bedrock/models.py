"""Which codec reads an InvokeModel body: the body is the model provider's own format, named by the id."""

import re
from typing import Final

from llmproxy.providers.base import ChatCodec

# `anthropic.claude-…`, inference profiles (`us.anthropic.…`, `global.anthropic.…`) and ARNs that end in
# either (`…:foundation-model/anthropic.…`, `…:inference-profile/us.anthropic.…`).
_ANTHROPIC: Final = re.compile(r"(^|[./])anthropic\.")


def invoke_codec(model_id: str | None, anthropic: ChatCodec) -> ChatCodec | None:
    """The chat codec for an invoke route's model, or None for models whose bodies llmproxy cannot read
    (other families, embedding models, opaque application-profile ARNs). New families add a branch here."""
    if model_id is not None and _ANTHROPIC.search(model_id):
        return anthropic
    return None
