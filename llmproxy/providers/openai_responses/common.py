"""What the Responses encoders and decoders must agree on: ids, stop reasons, usage and error codes."""

import math

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, Usage
from llmproxy.providers.base import JsonObject, stable_id
from llmproxy.providers.node import Node
from llmproxy.providers.usage_read import remembered

# status "incomplete": incomplete_details.reason ⇄ stop reason. Other stop reasons have no wire form.
INCOMPLETE_REASONS: dict[str, StopReason] = {
    "max_output_tokens": StopReason.MAX_TOKENS,
    "content_filter": StopReason.CONTENT_FILTER,
}
INCOMPLETE_STOPS = {stop: reason for reason, stop in INCOMPLETE_REASONS.items()}

# `response.error.code` (response.failed) per kind; the first code of each kind is the one encoders send.
# Codex CLI acts on rate_limit_exceeded, insufficient_quota, usage_not_included, context_length_exceeded.
_CODES: dict[ErrorKind, tuple[str, ...]] = {
    ErrorKind.SERVER_ERROR: ("server_error",),
    ErrorKind.RATE_LIMIT: ("rate_limit_exceeded",),
    ErrorKind.QUOTA_EXCEEDED: ("insufficient_quota", "usage_not_included"),
    ErrorKind.OVERLOADED: ("server_is_overloaded", "slow_down"),
    ErrorKind.REQUEST_TOO_LARGE: ("context_length_exceeded", "image_too_large", "image_file_too_large"),
    ErrorKind.TIMEOUT: ("timeout", "vector_store_timeout"),
    ErrorKind.AUTHENTICATION: ("invalid_api_key",),
    ErrorKind.PERMISSION: ("permission_denied",),
    ErrorKind.NOT_FOUND: ("model_not_found", "image_file_not_found"),
    ErrorKind.INVALID_REQUEST: (
        "invalid_prompt",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "bio_policy",
        "data_residency_mismatch",
    ),
}
_KINDS = {code: kind for kind, codes in _CODES.items() for code in codes}


def response_id(completion: Completion) -> str:
    """The completion's id, or one derived from its content (no clock, no rng)."""
    if completion.id:
        return completion.id
    return stable_id(
        "resp_", completion.model, completion.created, completion.text, completion.reasoning, completion.tool_calls
    )


def item_id(prefix: str, response: str, index: int) -> str:
    """Output item ids (`rs_`, `msg_`, `fc_`), stable for a given response id and output index."""
    return stable_id(prefix, response, index)


def error_code(error: ProviderError) -> str:
    """The code to send: the error's own type when it is a code of the same kind, else the kind's code."""
    if error.type is not None and _KINDS.get(error.type) is error.kind:
        return error.type
    return _CODES[error.kind][0]


def decode_failure(error: Node) -> ProviderError:
    """`{code, message}` of `response.error` or an `error` event; unknown codes count as server errors."""
    code = error["code"].opt_string()
    message = error["message"].opt_string() or ""
    kind = _KINDS.get(code, ErrorKind.SERVER_ERROR) if code is not None else ErrorKind.SERVER_ERROR
    return ProviderError(kind, message, code)


def encode_usage(usage: Usage) -> JsonObject:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


@remembered
def decode_usage(usage: Node) -> Usage | None:
    """Responses counts already mean what `Usage` means: input includes cached, output includes reasoning."""
    if not usage.present:
        return None
    usage.obj()
    inputs = usage["input_tokens_details"]
    return Usage(
        input_tokens=usage["input_tokens"].opt_integer(),
        output_tokens=usage["output_tokens"].opt_integer(),
        cache_read_tokens=inputs["cached_tokens"].opt_integer(),
        cache_write_tokens=inputs["cache_write_tokens"].opt_integer(),
        reasoning_tokens=usage["output_tokens_details"]["reasoning_tokens"].opt_integer(),
    )


def natural_stop(completion: Completion) -> StopReason:
    """What a completed response says by itself: tool use when it holds function calls."""
    return StopReason.TOOL_USE if completion.tool_calls else StopReason.END_TURN


def timestamp(node: Node) -> int | None:
    """`created_at` is an integer on the wire but a float in the SDK types: accept both."""
    if isinstance(node.value, float) and math.isfinite(node.value):
        return int(node.value)
    return node.integer() if node.present else None
