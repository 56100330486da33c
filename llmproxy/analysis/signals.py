"""The nine optimisation signals: pure detectors over a report's calls (docs/report.md has each one's rule).

Each detector returns a `SignalFinding` or None: the calls it affects (1-based indices into the report), the
input tokens it estimates wasted, and the dollars a fix would save, priced on the affected calls' own
models (`Savings`). Thresholds are constants here, as in MockServer's v1; what a provider caches is its own
(`llmproxy.providers.prompt_caching`). A call that got no answer billed nothing and wastes nothing: no
detector names one.

A session is a unit (one cassette per test makes each test one): what a session repeats of itself (a tool
call, a request) is judged within it, since two tests asking the same thing is no waste; what is shared
across sessions is judged across them — a tool is unused only if no call of the report calls it, and a
system prompt every test re-sends is one prompt the provider's cache would serve to all of them.
"""

import bisect
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from llmproxy.analysis.calls import LARGE_BLOCK_TOKENS, Block, RecordedCall
from llmproxy.analysis.savings import ZERO, Savings
from llmproxy.pricing import Priced
from llmproxy.providers.registry import facts
from llmproxy.words import plural

CACHED_SHARE = 0.9
LARGE_CONTEXT_TOKENS = 2_000
OVERSIZED_RESULT_TOKENS = 1_000
BLOAT_TOKENS = 1_500
BLOAT_MEDIAN_FACTOR = 3
LOW_CACHE_RATIO = 0.5
VERY_LOW_CACHE_RATIO = 0.2
TRIVIAL_OUTPUT_TOKENS = 256
TRIVIAL_INPUT_TOKENS = 1_024  # a call that reads more than this needs the model's understanding, not just words
OVERSPEND_FACTOR = Decimal("1.3")
UNUSED_TOOLS_MEDIUM_TOKENS = 1_000
ECONOMY_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "aws": "anthropic.claude-haiku-4-5-20251001-v1:0",
    "openai": "gpt-5-mini",
    "azure": "gpt-5-mini",
    "google": "gemini-2.5-flash-lite",
}
"""Each vendor's small current model: what MODEL_OVERSPEND compares a model's price with."""


@dataclass(frozen=True, slots=True)
class SignalFinding:
    """What a detector found; the report's `Signal` is what it becomes, with its fix and its money as text."""

    id: str
    severity: str
    affected: tuple[int, ...]
    wasted_input_tokens: int | None
    saving: Decimal | None
    detail: str
    mcp_tools: tuple[tuple[str, str], ...] = ()  # (server, tool) the finding's tool results came from


type Detector = Callable[[Sequence[RecordedCall], Savings], SignalFinding | None]


def detect(calls: Sequence[RecordedCall], savings: Savings) -> list[SignalFinding]:
    return [finding for detector in DETECTORS if (finding := detector(calls, savings)) is not None]


def _uncached_system(call: RecordedCall) -> int:
    """The system prompt tokens this call sent uncached: what its cache reads did not cover."""
    read, system = call.usage.cache_read_tokens, call.tokens(call.system_tokens)
    if read >= system * CACHED_SHARE:  # sizes are estimates: reads covering 90% of the prompt cover it
        return 0
    return max(0, min(system - read, call.usage.input_tokens - read))


def _system_repeats(calls: Sequence[RecordedCall]) -> list[tuple[int, RecordedCall, int]]:
    """(index, call, uncached system tokens) for every call that repeats an earlier call's system prompt, long
    enough for its model to cache: a shorter one cannot be cached, however often it is sent. Across sessions
    too: the provider's cache serves every request with the same prefix, whichever test or run sends it."""
    seen: set[str] = set()
    repeats = []
    for index, call in enumerate(calls, 1):
        if call.system_fingerprint is None or call.failed:
            continue
        if call.system_fingerprint in seen and _cacheable(call, call.tokens(call.system_tokens)):
            repeats.append((index, call, _uncached_system(call)))
        seen.add(call.system_fingerprint)
    return repeats


def caching_minimum(call: RecordedCall) -> int:
    """The fewest prompt tokens the call's model caches on its API (docs/providers.md#prompt-caching)."""
    return facts(call.provider).prompt_caching(call.model or "").minimum


def _cacheable(call: RecordedCall, tokens: int) -> bool:
    """Whether a prefix of `tokens` is one the call's model caches."""
    return tokens >= caching_minimum(call)


def _caching_saving(
    calls: Sequence[RecordedCall], repeats: list[tuple[int, RecordedCall, int]], savings: Savings
) -> Decimal:
    """Reading the repeats from cache, less writing each prompt to the cache once (its first call)."""
    saved = sum((savings.caching(call, tokens) for _, call, tokens in repeats), ZERO)
    firsts = {call.system_fingerprint: call for call in reversed(calls) if call.system_fingerprint}
    written = {call.system_fingerprint for _, call, tokens in repeats if tokens}
    premium = sum(
        (savings.cache_write_premium(firsts[f], firsts[f].tokens(firsts[f].system_tokens)) for f in written if f), ZERO
    )
    return max(ZERO, saved - premium)


def repeated_system_prompt(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    repeats = [repeat for repeat in _system_repeats(calls) if repeat[2] > 0]
    if not repeats:
        return None
    wasted = sum(tokens for _, _, tokens in repeats)
    full = sum(call.tokens(call.system_tokens) for _, call, _ in repeats)
    high = 2 * wasted >= full  # mostly sent uncached; partly cached is MEDIUM
    prompts = len({call.system_fingerprint for _, call, _ in repeats})
    detail = (
        f"{plural(len(repeats), 'call')} re-sent a system prompt an earlier call had sent "
        f"({plural(prompts, 'distinct prompt')}); {wasted:,} of its tokens were not read from the cache."
    )
    saving = _caching_saving(calls, repeats, savings)
    return SignalFinding(
        "REPEATED_SYSTEM_PROMPT", "HIGH" if high else "MEDIUM", _indices(repeats), wasted, saving, detail
    )


def low_cache_hit_rate(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    input_tokens = sum(call.usage.input_tokens for call in calls)
    ratio = sum(call.usage.cache_read_tokens for call in calls) / input_tokens if input_tokens else 0.0
    repeats = [repeat for repeat in _system_repeats(calls) if repeat[2] > 0]
    if ratio >= LOW_CACHE_RATIO or not repeats:
        return None
    not_yet_cached = sum(tokens for _, _, tokens in repeats)
    high = not_yet_cached >= LARGE_CONTEXT_TOKENS and ratio < VERY_LOW_CACHE_RATIO
    minimums = sorted({caching_minimum(call) for _, call, _ in repeats})
    minimum = (
        f"the model's caching minimum is {minimums[0]:,} tokens"
        if len(minimums) == 1
        else f"the models' caching minimums are {minimums[0]:,} to {minimums[-1]:,} tokens"
    )
    detail = (
        f"{ratio:.0%} of input tokens were read from the cache, while {not_yet_cached:,} tokens of a repeated "
        f"system prompt long enough to cache ({minimum}) were sent uncached on {plural(len(repeats), 'call')}."
    )
    saving = _caching_saving(calls, repeats, savings)
    return SignalFinding(
        "LOW_CACHE_HIT_RATE", "HIGH" if high else "MEDIUM", _indices(repeats), not_yet_cached, saving, detail
    )


def large_static_context_resent(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    """A block of 2,000+ tokens sent again: a system block on every call after the first that has it, a
    history block on every later call of its conversation that still holds it — where not read from cache."""
    carried = _carried(calls, lambda block: block.tokens, lambda call: call.large_blocks, include_new=False)
    seen: set[str] = set()
    for index, call in enumerate(calls, 1):
        for block in call.large_blocks:
            if block.position < 0:
                if block.fingerprint in seen:
                    carried[index] = carried.get(index, 0) + block.tokens
                seen.add(block.fingerprint)
    # a breakpoint covers at most the whole prompt: one its model would not cache holds nothing to cache
    carried = {i: tokens for i, tokens in carried.items() if _cacheable(calls[i - 1], calls[i - 1].usage.input_tokens)}
    affected = {
        index: uncached
        for index, tokens in carried.items()
        if (uncached := _uncached_carried(calls[index - 1], tokens))
    }
    if not affected:
        return None
    wasted = sum(affected.values())
    saving = sum((savings.caching(calls[i - 1], tokens) for i, tokens in affected.items()), ZERO)
    detail = (
        f"Blocks of {LARGE_BLOCK_TOKENS:,}+ tokens were re-sent on {plural(len(affected), 'call')}; "
        f"{wasted:,} of their tokens were not read from the cache."
    )
    return SignalFinding("LARGE_STATIC_CONTEXT_RESENT", "HIGH", tuple(sorted(affected)), wasted, saving, detail)


def deterministic_tool_call(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    """The same tool call (name and arguments) asked for again within a session: two tests asking the same
    question get the same call, each once, and neither could have been spared."""
    seen: dict[tuple[str, str], int] = {}
    repeated: dict[int, str] = {}
    for index, call in enumerate(calls, 1):
        for use in call.tool_calls:
            key = (call.session, use.fingerprint)
            if key in seen and seen[key] != index:
                repeated[index] = use.name
                repeated.setdefault(seen[key], use.name)
            else:
                seen.setdefault(key, index)
    if not repeated:
        return None
    firsts = set(seen.values())
    saving = sum(
        (savings.output(calls[i - 1], calls[i - 1].visible_output_tokens) for i in repeated if i not in firsts), ZERO
    )
    names = ", ".join(sorted(set(repeated.values())))
    their = "its" if len(repeated) == 1 else "their"
    detail = (
        f"{plural(len(repeated), 'call')} asked for a tool call with the same name and arguments as another "
        f"call of {their} session ({names})."
    )
    return SignalFinding("DETERMINISTIC_TOOL_CALL", "MEDIUM", tuple(sorted(repeated)), None, saving, detail)


def oversized_tool_result(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    """Tool results of 1,000+ tokens: what exceeds 1,000 tokens, on the call that brings a result back and on
    every later call of its conversation that re-sends it."""

    def excess(block: Block) -> int:
        return block.tokens - OVERSIZED_RESULT_TOKENS

    def oversized(call: RecordedCall) -> tuple[Block, ...]:
        return tuple(block for block in call.tool_results if block.tokens >= OVERSIZED_RESULT_TOKENS)

    carried = _carried(calls, excess, oversized, include_new=True)
    affected = {
        index: scaled
        for index, tokens in carried.items()
        if not calls[index - 1].failed and (scaled := calls[index - 1].tokens(tokens))
    }
    if not affected:
        return None
    biggest = max(block.tokens for call in calls for block in oversized(call))
    wasted = sum(affected.values())
    saving = sum((savings.input(calls[i - 1], tokens) for i, tokens in affected.items()), ZERO)
    detail = (
        f"Tool results of {OVERSIZED_RESULT_TOKENS:,}+ tokens (the largest {biggest:,}) were sent on "
        f"{plural(len(affected), 'call')}; what exceeds {OVERSIZED_RESULT_TOKENS:,} tokens, each time it is sent, "
        f"is {wasted:,} tokens."
    )
    return SignalFinding("OVERSIZED_TOOL_RESULT", "MEDIUM", tuple(sorted(affected)), wasted, saving, detail)


def output_token_bloat(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    """Long answers: long outright, or against their session's median answer (a failed call answered nothing,
    and is no answer of 0 tokens to compare with)."""
    answered = [call for call in calls if not call.failed]
    outputs = _by_session(answered, lambda call: call.visible_output_tokens)
    medians = {session: statistics.median(values) for session, values in outputs.items()}
    affected: dict[int, int] = {}
    for index, call in enumerate(calls, 1):
        if call.failed:
            continue
        median, size = medians[call.session], call.visible_output_tokens
        relative = len(outputs[call.session]) >= 3 and median > 0 and size >= BLOAT_MEDIAN_FACTOR * median
        if size >= BLOAT_TOKENS or relative:
            affected[index] = max(0, size - int(median))
    if not affected:
        return None
    saving = sum((savings.output(calls[i - 1], excess) for i, excess in affected.items()), ZERO)
    detail = (
        f"{plural(len(affected), 'answer')} ran to {BLOAT_TOKENS:,}+ visible output tokens or "
        f"{BLOAT_MEDIAN_FACTOR}x {'its' if len(affected) == 1 else 'their'} "
        f"session's median; {sum(affected.values()):,} tokens above the median."
    )
    return SignalFinding("OUTPUT_TOKEN_BLOAT", "LOW", tuple(sorted(affected)), None, saving, detail)


def duplicate_consecutive_call(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    previous: dict[str, RecordedCall] = {}
    affected: list[int] = []
    for index, call in enumerate(calls, 1):
        before = previous.get(call.session)
        if before is not None and before.shape == call.shape and not before.failed and not call.failed:
            affected.append(index)
        previous[call.session] = call
    if not affected:
        return None
    wasted = sum(calls[i - 1].usage.input_tokens for i in affected)
    saving = sum((savings.whole(calls[i - 1]) for i in affected), ZERO)
    their = "its" if len(affected) == 1 else "their"
    detail = f"{plural(len(affected), 'request')} repeated the request just answered in {their} session, unchanged."
    return SignalFinding("DUPLICATE_CONSECUTIVE_CALL", "MEDIUM", tuple(affected), wasted, saving, detail)


def model_overspend(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    trivial: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, call in enumerate(calls, 1):
        small = (
            call.visible_output_tokens < TRIVIAL_OUTPUT_TOKENS
            and call.usage.input_tokens < TRIVIAL_INPUT_TOKENS
            and not call.tool_calls
            and not call.usage.reasoning_tokens
        )
        if small and call.status == 200 and isinstance(call.cost, Priced) and call.model and call.vendor:
            trivial[call.vendor, call.cost.model].append(index)
    affected: list[int] = []
    saving = ZERO
    for (vendor, model), indices in sorted(trivial.items()):
        economy = ECONOMY_MODELS.get(vendor)
        if economy is None or len(indices) < 2:
            continue
        first = calls[indices[0] - 1]
        rate, cheap = savings.blended_rate(first, model), savings.blended_rate(first, economy)
        if rate is None or cheap is None or rate <= cheap * OVERSPEND_FACTOR:
            continue
        fraction = 1 - cheap / rate
        affected.extend(indices)
        saving += sum((savings.whole(calls[i - 1]) * fraction for i in indices), ZERO)
    if not affected:
        return None
    detail = (
        f"{plural(len(affected), 'call')} answered in under {TRIVIAL_OUTPUT_TOKENS} tokens with no tool calls and no "
        f"reasoning on a model priced more than {OVERSPEND_FACTOR}x its vendor's small model."
    )
    return SignalFinding("MODEL_OVERSPEND", "LOW", tuple(sorted(affected)), None, saving, detail)


def unused_tool_schema(calls: Sequence[RecordedCall], savings: Savings) -> SignalFinding | None:
    """Tools offered that no call of the report calls. A tool one test (or run) calls and another does not is
    one the application needs: a test that did not need it wasted nothing a team could remove."""
    used: set[str] = set()
    for call in calls:
        used.update(use.name for use in call.tool_calls)
        used.update(block.name for block in call.tool_results if block.name)
    affected: dict[int, int] = {}
    unused_names: set[str] = set()
    known: dict[tuple[str, ...], list[str]] = {}  # an agent offers the same tools every call
    for index, call in enumerate(calls, 1):
        unused = known.get(call.defined_tools)
        if unused is None:
            unused = known[call.defined_tools] = [name for name in call.defined_tools if name not in used]
        if unused and call.defined_tool_tokens > 0 and not call.failed:
            affected[index] = call.tokens(call.defined_tool_tokens) * len(unused) // len(call.defined_tools)
            unused_names.update(unused)
    if len(affected) < 2:
        return None
    wasted = sum(affected.values())
    saving = sum((savings.input(calls[i - 1], tokens) for i, tokens in affected.items()), ZERO)
    shown = ", ".join(sorted(unused_names)[:8]) + (", …" if len(unused_names) > 8 else "")
    sessions = len({call.session for call in calls})
    where = f" in any of the {sessions:,} sessions" if sessions > 1 else ""
    detail = (
        f"{plural(len(unused_names), 'tool')} offered on {plural(len(affected), 'call')} and never called{where} "
        f"({shown}): about {wasted:,} tokens of definitions."
    )
    severity = "MEDIUM" if wasted >= UNUSED_TOOLS_MEDIUM_TOKENS else "LOW"
    return SignalFinding("UNUSED_TOOL_SCHEMA", severity, tuple(sorted(affected)), wasted, saving, detail)


def _carried(
    calls: Sequence[RecordedCall],
    size: Callable[[Block], int],
    blocks: Callable[[RecordedCall], tuple[Block, ...]],
    *,
    include_new: bool,
) -> dict[int, int]:
    """Per call, the summed `size` of the history blocks it sends that its conversation brought in: those of
    earlier calls still within its history (position below its message count), and its own when `include_new`.
    One pass per conversation, so a 10,000-call session costs a sort, not a square."""
    carried: dict[int, int] = {}
    positions: dict[str, list[int]] = defaultdict(list)  # sorted positions of the blocks brought in so far
    totals: dict[str, list[int]] = defaultdict(list)  # running sums of their sizes, in that order
    for index, call in enumerate(calls, 1):
        mine = [block for block in blocks(call) if block.position >= 0]
        if not mine and call.conversation not in positions:  # nothing brought in, nothing carried
            continue
        known, sums = positions[call.conversation], totals[call.conversation]
        held = bisect.bisect_left(known, call.message_count)  # blocks within this call's history
        earlier = sums[held - 1] if held else 0
        own = sum(size(block) for block in mine) if include_new else 0
        if earlier + own > 0:
            carried[index] = earlier + own
        for block in mine:
            at = bisect.bisect_right(known, block.position)
            known.insert(at, block.position)
            sums.insert(at, (sums[at - 1] if at else 0))
            for later in range(at, len(sums)):
                sums[later] += size(block)
    return carried


def _uncached_carried(call: RecordedCall, estimate: int) -> int:
    """Of the blocks a call re-sends (`estimate` tokens), those its cache reads did not cover. Providers cache
    a prompt's prefix, and re-sent blocks come before what the call sends new: reads covering 90% of the prompt
    cover them (sizes are estimates), the few tokens left uncached being the call's newest messages."""
    if call.usage.cache_read_tokens >= call.usage.input_tokens * CACHED_SHARE:
        return 0
    return min(call.tokens(estimate), _uncached_input(call))


def _uncached_input(call: RecordedCall) -> int:
    return max(0, call.usage.input_tokens - call.usage.cache_read_tokens)


def _by_session(calls: Sequence[RecordedCall], value: Callable[[RecordedCall], int]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for call in calls:
        grouped[call.session].append(value(call))
    return grouped


def _indices(repeats: list[tuple[int, RecordedCall, int]]) -> tuple[int, ...]:
    return tuple(index for index, _, _ in repeats)


DETECTORS: tuple[Detector, ...] = (
    repeated_system_prompt,
    large_static_context_resent,
    deterministic_tool_call,
    oversized_tool_result,
    output_token_bloat,
    duplicate_consecutive_call,
    low_cache_hit_rate,
    model_overspend,
    unused_tool_schema,
)
