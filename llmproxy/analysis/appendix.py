"""The report's appendix: each session's richest conversation and the tools offered, redacted.

One conversation per session — the request that carried the most history — rebuilt whole only for that
request, so the appendix costs one conversation per session however long the recording.
"""

from collections import Counter
from collections.abc import Callable, Sequence

import orjson

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.graph import call_graph
from llmproxy.analysis.redaction import Scrubber
from llmproxy.analysis.report import (
    Appendix,
    AppendixConversation,
    AppendixMessage,
    AppendixTool,
    CallGraph,
    ToolCallRow,
)
from llmproxy.model import Conversation, ToolDefinition

EXCERPT = 2_000


def richest(calls: Sequence[RecordedCall]) -> dict[str, int]:
    """Per session, the index of its call with the most history (the latest on a tie)."""
    best: dict[str, int] = {}
    for index, call in enumerate(calls, 1):
        current = best.get(call.session)
        if current is None or call.message_count >= calls[current - 1].message_count:
            best[call.session] = index
    return best


def appendix(
    calls: Sequence[RecordedCall], conversation: Callable[[RecordedCall], Conversation | None], scrub: Scrubber
) -> tuple[Appendix, CallGraph | None]:
    """The appendix, and the call graph of the richest conversation of all."""
    conversations: list[AppendixConversation] = []
    graph: CallGraph | None = None
    most = -1
    tools: dict[str, ToolDefinition] = {}
    for session, index in sorted(richest(calls).items(), key=lambda item: item[1]):
        request = conversation(calls[index - 1])
        if request is None:
            continue
        for tool in request.tools:
            tools.setdefault(tool.name, tool)
        if calls[index - 1].message_count > most:
            most = calls[index - 1].message_count
            graph = call_graph(request, session, index, scrub)
        conversations.append(
            AppendixConversation(
                session=session,
                call=index,
                system=_excerpt(request.system_text, scrub),
                messages=[
                    AppendixMessage(
                        role=message.role.value,
                        text=_excerpt(message.text, scrub),
                        toolCalls=[
                            ToolCallRow(id=c.id, name=c.name, arguments=_excerpt(_json(c.arguments), scrub))
                            for c in message.tool_calls
                        ],
                        toolResults=[part.name or part.tool_call_id for part in message.tool_results],
                    )
                    for message in request.messages
                ],
            )
        )
    offered = Counter(name for call in calls for name in call.defined_tools)
    invoked = Counter(use.name for call in calls for use in call.tool_calls)
    definitions = [
        AppendixTool(
            name=name,
            description=_excerpt(tool.description or "", scrub),
            parameters=_excerpt(_json(tool.parameters), scrub),
            calls=offered[name],
            invoked=invoked[name],
        )
        for name, tool in sorted(tools.items())
    ]
    return Appendix(conversations=conversations, toolDefinitions=definitions), graph


def _excerpt(text: str, scrub: Scrubber) -> str:
    """The text redacted, then cut at EXCERPT characters with a note that says so (redacted first: a cut
    through a secret could leave a piece the redactor no longer recognises)."""
    text = scrub.text(text)
    if len(text) <= EXCERPT:
        return text
    return f"{text[:EXCERPT]}… [cut: {EXCERPT:,} of {len(text):,} characters shown]"


def _json(value: object) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if value is not None else "{}"
