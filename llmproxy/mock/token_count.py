"""The mock's own answer to a count-token request no expectation answers (Anthropic `count_tokens`, OpenAI
`input_tokens`, Gemini and Code Assist `countTokens`, Bedrock `CountTokens`): llmproxy's estimate of the
prompt, the same the mock reports as a mocked answer's input usage, in the provider's shape. It is marked
as an estimate by a header, since a client cannot tell it from the provider's count otherwise."""

from llmproxy.chain.incoming import Incoming
from llmproxy.mock import spec
from llmproxy.mock.usage import estimate_usage
from llmproxy.model import Completion
from llmproxy.providers.token_counts import token_counter

ESTIMATED_HEADER = "x-llmproxy-estimated"
SOURCE = "token count estimated by llmproxy"


def estimated_count(request: Incoming) -> spec.HttpReply | None:
    """The count as the provider would answer it, or None for a request that is not a readable count."""
    counter = token_counter(request.route)
    conversation = request.conversation if counter is not None else None
    if counter is None or conversation is None:  # not a count, or not readable: a miss, the cassette may know it
        return None
    count = estimate_usage(conversation, Completion()).input_tokens
    headers = {"content-type": "application/json", ESTIMATED_HEADER: "token-count"}
    return spec.HttpReply(status=200, headers=headers, body=counter.answer(count).decode())
