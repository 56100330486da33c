"""The worked example of docs/architecture.md ("Adding a stage") runs as written: extracted from the page,
put in a chain, and asked through the chain as both doors ask."""

import re
from pathlib import Path
from typing import Any

from llmproxy.chain import Chain, Context, Door, Incoming, Network, ReplySource, Upstream
from tests.cassette.factory import request
from tests.samples import CHAT

PAGE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def example() -> dict[str, Any]:
    section = PAGE.read_text().split("### Adding a stage", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(PAGE), "exec"), namespace)
    return namespace


def anthropic() -> Incoming:
    sample = CHAT[0]
    raw = request(sample.data, host=sample.host, path=sample.path, headers=())
    return Incoming(raw, Door.PROXY, Upstream(sample.host, 443, (sample.host,)))


def test_the_example_stage_answers_with_the_providers_own_529_or_passes_on() -> None:
    namespace = example()
    stage = namespace["Overloaded"](namespace["Odds"](rate=1.0))
    chain = Chain([stage], network=Network(everything=True))
    reply = chain.answer(anthropic(), Context(Door.PROXY))
    assert reply is not None
    assert (reply.status, reply.source) == (529, ReplySource.FAULT)
    assert b'"type":"overloaded_error"' in (reply.body or b"")
    assert "a 529 for 100% of requests" in chain.explain()

    stage.state.swap(namespace["Odds"](rate=0.0))
    passed = anthropic()
    assert chain.answer(passed, Context(Door.PROXY)) is None  # on to the upstream
    assert [decline.stage for decline in passed.declines] == ["intercept"]
    chain.close()
    assert chain.summary() == ["overloaded 1 request"]
