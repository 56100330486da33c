"""A stdio MCP server's request answered from a replay's cassettes: the same index, matching and account of
hits and misses as an HTTP request's, whether the tap replays a cassette itself or asks the run it is in."""

from typing import Any

from llmproxy.cassette.replay_index import ReplayMiss
from llmproxy.chain.stages.replay import Replaying
from llmproxy.mcp.stdio_exchange import matched_request, written_lines


def answer_from(replaying: Replaying, server: str, message: bytes, records_misses: bool = False) -> list[Any] | str:
    """What `server` wrote for the recorded request `message` matches (parsed lines, the answer last), or the
    miss explained (counted as the replay's miss unless the asker `records_misses`: it goes to the server)."""
    decision = replaying.index.take(matched_request(server, message), None)
    if isinstance(decision, ReplayMiss):
        if not records_misses:
            replaying.missed(decision)
        return decision.explain().replace("\n", "; ")
    with replaying.lock:
        replaying.hits += 1
    return written_lines(decision.exchange)
