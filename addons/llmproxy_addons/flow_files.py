"""mitmproxy flow files (``mitmdump -w``, mitmproxy's save) read as import entries, by mitmproxy's own `io`
module: it reads every flow format version mitmproxy has written up to its own, and refuses a newer one.

Each HTTP flow is made into an exchange by the same seam the proxy records through (`flows.py`); a streamed
answer, which the file keeps whole, is cut into its events as the proxy cuts them. Flows that are not HTTP
(TCP, UDP, DNS) are entries that cannot be imported, counted and named.
"""

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from mitmproxy import http, io
from mitmproxy.exceptions import FlowReadException

from llmproxy.cassette.decoding import decode_body
from llmproxy.importing.entries import Entry, UnreadableError
from llmproxy.importing.wire import split_stream
from llmproxy.model.exchange import RawExchange
from llmproxy_addons.flows import raw_exchange, raw_request


def read_flows(path: Path) -> Iterator[Entry]:
    """Raises UnreadableError for a file mitmproxy cannot read (cut short, another version, not flows)."""
    index = -1
    try:
        with path.open("rb") as file:
            for index, flow in enumerate(io.FlowReader(file).stream()):
                where = f"{path}: flow {index}"
                if not isinstance(flow, http.HTTPFlow):
                    yield Entry.broken(where, f"a {flow.type} flow, not HTTP")
                    continue
                try:
                    yield Entry(where, _exchange(flow))
                except (ValueError, TypeError, AttributeError) as exc:
                    yield Entry.broken(where, str(exc))
    except FlowReadException as exc:
        after = f" after flow {index}" if index >= 0 else ""
        raise UnreadableError(f"{path}: not a mitmproxy flow file mitmproxy can read{after}: {exc}") from None


def _exchange(flow: http.HTTPFlow) -> RawExchange:
    error = flow.error.msg if flow.error is not None else None
    exchange = raw_exchange(flow, raw_request(flow.request), None, error if flow.response is None else None)
    response = flow.response
    if response is None or exchange.response is None or exchange.response.undecodable:
        return exchange
    body, _ = decode_body(response.raw_content or b"", response.headers.get("content-encoding"))
    cut = split_stream(body, response.headers.get("content-type"), exchange.ttfb_ms or 0.0, exchange.total_ms)
    if cut is None:
        return exchange
    events, notes = cut
    answer = replace(exchange.response, body=None, events=events)
    return replace(exchange, response=answer, notes=(*exchange.notes, *notes))
