"""The background stage: what the coding CLIs and agent frameworks send beside their model calls (telemetry,
flags, update checks, registry look-ups, and the analytics protocols known by their shape:
`llmproxy.background_traffic`) gets a harmless answer when nothing before it
answered and the network is closed to it — instead of a miss that fails the run. So does what an MCP client
sends that it awaits no answer to (`llmproxy.tool_protocols.awaits_no_answer`): its GET stream gets the 405 of
a server that opens none, its notifications and answers a 202. What may go out (a record mode,
`--allow-host`) goes out. Left out of the chain with `--strict-background`."""

import threading
from collections import Counter
from collections.abc import Callable

from llmproxy.background_traffic import KNOWN, Background, BackgroundTraffic
from llmproxy.chain.chain import Network
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Context, Stage
from llmproxy.tool_protocols import awaits_no_answer


class BackgroundStage(Stage):
    name = "background"
    EXPLAINED = "the coding CLIs' background traffic answered harmlessly (docs/replay.md)"  # also a plan's

    def __init__(self, network: Network | Callable[[], Network], traffic: BackgroundTraffic = KNOWN) -> None:
        """`network`: what may go out, or where to read it on each request (the pytest plugin's chain opens it to
        a test that records and closes it again); `traffic`: what is background traffic (with the hosts
        `--background-host` names)."""
        self.network = network if callable(network) else lambda: network
        self.traffic = traffic
        self.answered: Counter[str] = Counter()  # "Claude Code telemetry" → how many
        self._lock = threading.Lock()

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        raw = incoming.raw
        entry = self.traffic.recognise(raw.host, raw.path, llm_api=incoming.route is not None, method=raw.method)
        mcp = entry is None and awaits_no_answer(raw.method, incoming.headers, incoming.json)
        if (entry is None and not mcp) or (context.forwards and self.network().refusal(incoming) is None):
            return None
        if mcp:
            stream = raw.method == "GET"
            with self._lock:
                self.answered["MCP event stream" if stream else "MCP notification"] += 1
            if stream:  # "the server MUST either return text/event-stream or else HTTP 405" (Streamable HTTP)
                return Reply(405, (("allow", "POST, DELETE"),), b"", source=ReplySource.BACKGROUND)
            return Reply(202, (), b"", source=ReplySource.BACKGROUND)
        assert entry is not None
        with self._lock:
            self.answered[_name(entry)] += 1
        answer = entry.answering(incoming.headers.get("content-type", ""))
        return Reply(
            answer.status, (("content-type", answer.content_type),), answer.body, source=ReplySource.BACKGROUND
        )

    def explain(self) -> str:
        return self.EXPLAINED

    def summary(self) -> list[str]:
        if not self.answered:
            return []
        total = sum(self.answered.values())
        named = ", ".join(f"{name} ×{count}" if count > 1 else name for name, count in self.answered.items())
        return [f"  answered {total} background requests harmlessly: {named}"]


def _name(entry: Background) -> str:
    return f"{entry.client} {entry.what}"
