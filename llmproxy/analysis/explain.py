"""`llmproxy explain`: an agent run as MockServer's `explain_agent_run` describes it — the richest
conversation (the request with the most history) summarised, as a call graph, and the calls as a timeline."""

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from llmproxy.analysis.appendix import richest
from llmproxy.analysis.build import Selection, select
from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.coverage import Coverage
from llmproxy.analysis.figures import dollars
from llmproxy.analysis.graph import call_graph
from llmproxy.analysis.redaction import Scrubber
from llmproxy.analysis.report import CallGraph
from llmproxy.analysis.sources import Recorded
from llmproxy.analysis.tool_servers import ToolTally, timeline_lines
from llmproxy.model import Conversation, Role
from llmproxy.pricing import Priced
from llmproxy.words import plural


class Explanation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    session: str
    call: int
    messageCount: int
    assistantTurns: int
    toolCallSequence: list[str]
    toolResultsFor: list[str]
    latestRole: str | None
    callGraph: CallGraph


def explain(conversation: Conversation, session: str, call: int) -> Explanation:
    messages = conversation.messages
    return Explanation(
        session=session,
        call=call,
        messageCount=len(messages),
        assistantTurns=sum(1 for message in messages if message.role is Role.ASSISTANT),
        toolCallSequence=[tool.name for message in messages for tool in message.tool_calls],
        toolResultsFor=[part.tool_call_id for message in messages for part in message.tool_results],
        latestRole=messages[-1].role.value if messages else None,
        callGraph=call_graph(conversation, session, call, Scrubber()),
    )


def explain_selected(
    recorded: Recorded, selection: Selection
) -> tuple[list[RecordedCall], Coverage, Explanation | None]:
    """The calls `selection` chooses, what they are of those asked about, and the richest conversation among
    them explained (None when there is no chat call, or its request no longer decodes)."""
    calls, dropped = select(recorded.calls, selection)
    skipped = ((source.path, source.skipped) for source in recorded.sources)
    coverage = Coverage.of(len(calls), dropped, selection.max_calls, skipped)
    if not calls:
        return calls, coverage, None
    best = max(richest(calls).values(), key=lambda index: (calls[index - 1].message_count, index))
    conversation = recorded.conversation(calls[best - 1])
    explanation = explain(conversation, calls[best - 1].session, best) if conversation is not None else None
    return calls, coverage, explanation


def timeline(
    calls: Sequence[RecordedCall],
    explanation: Explanation | None,
    gaps: Sequence[str] = (),
    tools: Sequence[ToolTally] = (),
) -> str:
    """The calls in order with their time from the first, then the richest conversation step by step, then the
    MCP tool calls (`tools`); `gaps` says what the calls are not (`Coverage.gaps`: the older calls
    `--max-calls` left out…)."""
    if not calls:
        return "\n".join(["no chat calls", *gaps, *timeline_lines(tools)]) + "\n"
    start = calls[0].started_at
    lines = [f"{plural(len(calls), 'call')} from {start.isoformat()}", *gaps]
    for index, call in enumerate(calls, 1):
        offset = (call.started_at - start).total_seconds()
        cost = dollars(call.cost.usd) if isinstance(call.cost, Priced) else "unpriced"
        latency = f"{call.latency_ms:,.0f} ms" if call.latency_ms is not None else "—"
        called = ", ".join(use.name for use in call.tool_calls)
        lines.append(
            f"  +{offset:8.2f}s  #{index:<3} {call.model or '?'}  in {call.usage.input_tokens:,}"
            f" (cached {call.usage.cache_read_tokens:,}) out {call.usage.output_tokens:,}  {cost}  {latency}"
            + (f"  → {called}" if called else f"  {call.finish_reason or call.error or ''}")
        )
    if explanation is not None:
        lines += ["", f"richest conversation ({explanation.session}, call {explanation.call}):"]
        invoked: dict[str, list[str]] = {}
        for edge in explanation.callGraph.edges:
            if edge.kind == "INVOKES":
                invoked.setdefault(edge.from_, []).append(edge.to)
        labels = {node.id: node for node in explanation.callGraph.nodes}
        for node in explanation.callGraph.nodes:
            if node.kind == "TOOL_CALL":
                continue
            lines.append(f"  {node.kind.lower():>9}: {node.label}")
            lines += [f"            └─ calls {labels[tool].label}" for tool in invoked.get(node.id, [])]
    return "\n".join([*lines, *timeline_lines(tools)]) + "\n"
