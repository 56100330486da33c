"""An agent run as a call graph (MockServer's `explain_agent_run`), and the graph as Mermaid.

Nodes: one per message (`m1`, `m2`… in order, kind = its role) and one per tool call an assistant message
makes (`t1`, `t2`…). Edges: NEXT from each message to the next, INVOKES from an assistant message to each of
its tool calls, RESULT from a tool call to the message that carries its result (matched by call id).
"""

from typing import Literal

import orjson

from llmproxy.analysis.redaction import Scrubber
from llmproxy.analysis.report import CallGraph, GraphEdge, GraphNode
from llmproxy.model import Conversation, Message
from llmproxy.words import clip

LABEL = 80


def call_graph(conversation: Conversation, session: str, call: int, scrub: Scrubber) -> CallGraph:
    nodes: list[GraphNode] = []
    edges: list[GraphEdge] = []
    calls: dict[str, str] = {}  # tool call id → node id
    previous: str | None = None
    if conversation.system_text:
        nodes.append(GraphNode(id="m0", kind="SYSTEM", label=_label(conversation.system_text, scrub)))
        previous = "m0"
    names: dict[str, str] = {}  # tool call id → the tool's name, for a result that carries no text
    for number, message in enumerate(conversation.messages, 1):
        node = f"m{number}"
        text = message.text.strip() or _gist(message, names)
        nodes.append(GraphNode(id=node, kind=message.role.value.upper(), label=_label(text, scrub)))
        if previous is not None:
            edges.append(_edge(previous, node, "NEXT"))
        previous = node
        for part in message.tool_results:
            if part.tool_call_id in calls:
                edges.append(_edge(calls[part.tool_call_id], node, "RESULT"))
        for tool_call in message.tool_calls:
            tool = f"t{len(calls) + 1}"
            calls[tool_call.id] = tool
            names[tool_call.id] = tool_call.name
            arguments = tool_call.invalid_arguments or _compact(tool_call.arguments)
            nodes.append(GraphNode(id=tool, kind="TOOL_CALL", label=_label(f"{tool_call.name} {arguments}", scrub)))
            edges.append(_edge(node, tool, "INVOKES"))
    return CallGraph(session=session, call=call, nodes=nodes, edges=edges)


def mermaid(graph: CallGraph) -> str:
    """A Mermaid flowchart: messages down the page, tool calls beside them; dashed lines for results."""
    lines = ["flowchart TD"]
    for node in graph.nodes:
        text = node.label.replace('"', "'") or "(empty)"
        shape = (
            f'{node.id}[["{node.kind}: {text}"]]' if node.kind == "TOOL_CALL" else f'{node.id}["{node.kind}: {text}"]'
        )
        lines.append(f"  {shape}")
    arrows = {"NEXT": "-->", "INVOKES": "-->|invokes|", "RESULT": "-.->|result|"}
    lines += [f"  {edge.from_} {arrows[edge.kind]} {edge.to}" for edge in graph.edges]
    return "\n".join(lines) + "\n"


def _edge(start: str, end: str, kind: Literal["NEXT", "INVOKES", "RESULT"]) -> GraphEdge:
    return GraphEdge(start, end, kind)


def _label(text: str, scrub: Scrubber) -> str:
    """Redacted first (a cut through a secret could leave a piece the redactor no longer knows), then cut after
    the last whole word that fits LABEL characters."""
    return clip(scrub.text(" ".join(text.split())), LABEL)


def _gist(message: Message, names: dict[str, str]) -> str:
    """What a message without text holds, so that no node is empty: "calls Bash", "result of Bash"."""
    if message.tool_calls:
        return "calls " + ", ".join(call.name for call in message.tool_calls)
    if message.tool_results:
        tools = ", ".join(names.get(part.tool_call_id, part.name or part.tool_call_id) for part in message.tool_results)
        return f"empty result of {tools}"
    return "(no text)"


def _compact(arguments: object) -> str:
    return orjson.dumps(arguments).decode()
