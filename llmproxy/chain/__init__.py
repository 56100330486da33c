"""The answer chain (docs/architecture.md#one-chain-three-doors): one request type, one answer type, and the ordered
stages every request meets, through either door. `chain.py` declares the order; `stages/` and `taps/` hold what fills
the slots."""

from llmproxy.chain.chain import REQUEST_SIDE, RESPONSE_SIDE, Chain, Network, Observers
from llmproxy.chain.incoming import Decline, Decoded, Door, Forwarding, Incoming, Upstream
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Context, CutStream, Explains, Observer, ResponseHead, Stage, Summarises, Tap

__all__ = [
    "REQUEST_SIDE",
    "RESPONSE_SIDE",
    "Chain",
    "Context",
    "CutStream",
    "Decline",
    "Decoded",
    "Door",
    "Explains",
    "Forwarding",
    "Incoming",
    "Network",
    "Observer",
    "Observers",
    "Reply",
    "ReplySource",
    "ResponseHead",
    "Stage",
    "Summarises",
    "Tap",
    "Upstream",
]
