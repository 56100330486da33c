"""The journal listing's rows: each entry as `GET /journal` lists it and the event stream pushes it — the JSON
of its `JournalSummary` (camelCase, no absent field) — made once, from the entry's glance, and kept.

A watched run makes one for every exchange it answers, so a row is written straight as the JSON value the model
would dump, not made as the model and then dumped (which cost four times as much), and what repeats across
entries is made once: the price of a usage on a model (`PriceBook.cost` remembers it), its text, and the usage's
own object. `tests/control/test_glance.py` holds every row to the model's dump of the same values."""

from datetime import datetime
from typing import Any, Final

import orjson

from llmproxy.journal import Entry, Source
from llmproxy.model import Usage
from llmproxy.pricing import PriceBook, Priced

type Row = dict[str, Any]
"""A `JournalSummary` as its JSON value (`model_dump(mode="json", by_alias=True, exclude_none=True)`)."""

_KEPT: Final = 1024  # usages and prices whose JSON is kept; more, and they are all forgotten at once


class Rows:
    """Each entry's row, made once: the event stream sends it as the entry comes and a listing reads it again;
    kept for about as many entries as the journal keeps (those it dropped go with the next ones). The price data
    is loaded the first time an entry with usage is read (it takes a moment)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._made: dict[int, Row] = {}
        self._book: PriceBook | None = None
        self._usages: dict[int, tuple[Usage, Row]] = {}  # by the usage's identity, which the value holds
        self._prices: dict[int, tuple[Priced, str]] = {}  # the same, a price's USD as text

    def of(self, entry: Entry) -> Row:
        made = self._made.get(entry.seq)
        if made is None:
            made = self._made[entry.seq] = self._row(entry)
            if len(self._made) > 2 * self.capacity:  # now and then, not on every entry
                oldest = entry.seq - self.capacity
                self._made = {seq: kept for seq, kept in list(self._made.items()) if seq > oldest}
        return made

    def event(self, entry: Entry) -> bytes:
        """The entry's server-sent event: its row, as JSON on one line."""
        return b"event: entry\nid: %d\ndata: %b\n\n" % (entry.seq, orjson.dumps(self.of(entry)))

    def _row(self, entry: Entry) -> Row:
        """The entry as a listing shows it: read from its glance, never converting the exchange whole. The glance
        is unpacked in one step: each of its fields read by name is an attribute lookup the interpreter does not
        specialise, several of them for every row."""
        at, method, url, provider, operation, vendor, model, status, streaming, latency_ms, ttfb_ms, usage, error, \
            injected, latency_recorded = entry.glance  # fmt: skip
        row: Row = {"seq": entry.seq, "source": entry.source}
        if entry.door is not None:
            row["door"] = entry.door
        row["at"] = _instant(at)
        row["method"] = method
        row["url"] = url
        if provider is not None:
            row["provider"] = provider
        if operation is not None:
            row["operation"] = operation
        if model is not None:
            row["model"] = model
        if status is not None:
            row["status"] = status
        row["streaming"] = streaming
        if latency_ms is not None:
            row["latencyMs"] = latency_ms
        if ttfb_ms is not None:
            row["ttfbMs"] = ttfb_ms
        row["latencyRecorded"] = latency_recorded
        if usage is not None:
            row["usage"] = self._usage(usage)
            if entry.source is not Source.MISSED:
                if self._book is None:
                    self._book = PriceBook()
                cost = self._book.cost(usage, model, at=at, vendor=vendor, url=url)
                if isinstance(cost, Priced):
                    row["costUsd"] = self._usd(cost)
                else:
                    row["unpriced"] = cost.reason
        if entry.test_id is not None:
            row["testId"] = entry.test_id
        if error is not None:
            row["error"] = error
        row["injected"] = list(injected)
        return row

    def _usage(self, usage: Usage) -> Row:
        """A `TokenUsage`'s JSON, made once per usage: a run's answers report the same few, each read once (the
        codecs' readers hand out one object for each). Shared by the rows: nothing changes it."""
        kept = self._usages.get(id(usage))
        if kept is not None and kept[0] is usage:
            return kept[1]
        made = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadTokens": usage.cache_read_tokens,
            "cacheWriteTokens": usage.cache_write_tokens,
            "reasoningTokens": usage.reasoning_tokens,
            "estimated": usage.estimated,
        }
        if len(self._usages) >= _KEPT:
            self._usages.clear()
        self._usages[id(usage)] = (usage, made)
        return made

    def _usd(self, cost: Priced) -> str:
        """A price's USD as the decimal's text, once per price (`PriceBook.cost` hands out one for each)."""
        kept = self._prices.get(id(cost))
        if kept is not None and kept[0] is cost:
            return kept[1]
        text = str(cost.usd)
        if len(self._prices) >= _KEPT:
            self._prices.clear()
        self._prices[id(cost)] = (cost, text)
        return text


def _instant(at: datetime) -> str:
    """An instant as pydantic's JSON writes it (RFC 3339, UTC as `Z`, microseconds only when there are some)."""
    return orjson.dumps(at, option=orjson.OPT_UTC_Z)[1:-1].decode()
