"""The journal on its own, filled by its tap as the mock's replies pass: numbering, the exact drop count and
counts by source while several threads add and one reads, a full journal showing its capacity exactly while
it lets the oldest go in batches, a limit met newest first, a listing's glance
showing what the exchange converted whole shows, its URL's key redacted, and the exchanges read whole kept only
for the few read last."""

import threading
import weakref

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.taps.journal import JournalTap
from llmproxy.journal import RECENT, Journal, Query, Source
from llmproxy.model.exchange import RawRequest

KEY = "AIzaSyD-0123456789abcdefghijklmnopqrstu"  # a Google API key's shape: the redactor knows it
ANSWER = orjson.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
)


def request(test_id: str, path: str = "/v1/chat/completions") -> RawRequest:
    body = orjson.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "capital?"}]})
    headers = (("host", "api.openai.com"), ("content-type", "application/json"), ("x-llmproxy-test-id", test_id))
    return RawRequest("POST", "https", "api.openai.com", 443, path, "HTTP/1.1", headers, body, None)


def answer(tap: JournalTap, raw: RawRequest, source: ReplySource = ReplySource.MOCK) -> None:
    tap.reply(Incoming(raw, Door.RELAY), Reply(200, (("content-type", "application/json"),), ANSWER, source=source))


def test_threads_adding_while_one_reads_keep_numbering_and_drops_exact() -> None:
    tap = JournalTap(Journal(100), Redactor())
    journal = tap.journal
    adders, each = 4, 500
    done = threading.Event()
    seen: list[list[int]] = []

    def add(number: int) -> None:
        source = ReplySource.MOCK if number % 2 else ReplySource.CASSETTE
        for _ in range(each):
            answer(tap, request(f"t{number}"), source)

    def read() -> None:
        while not done.is_set():
            seen.append([entry.seq for entry in journal.read(Query(limit=10))])

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=add, args=(number,)) for number in range(adders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    total = adders * each
    assert [entry.seq for entry in journal.read()] == list(range(total - 99, total + 1))
    assert (journal.last, journal.kept, journal.dropped) == (total, 100, total - 100)
    assert journal.counts() == {Source.MOCKED: total // 2, Source.REPLAYED: total // 2}
    assert all(seqs == list(range(seqs[0], seqs[0] + len(seqs))) for seqs in seen if seqs)  # never a gap
    assert journal.get(total - 100) is None
    entry = journal.get(total)
    assert entry is not None
    assert entry.seq == total
    assert entry is journal.read(Query(since=total - 1))[0]  # made once, read again as the same entry


def test_a_full_journal_shows_its_capacity_and_lets_the_oldest_go_in_batches() -> None:
    tap = JournalTap(Journal(16), Redactor())
    journal = tap.journal
    for number in range(1, 40):
        answer(tap, request("t"), ReplySource.MOCK if number % 3 else ReplySource.FAULT)
        if number % 5:  # asked at most steps: each time counting only what came since, and what was let go
            injected = number // 3
            assert journal.counts() == {Source.MOCKED: number - injected} | (
                {Source.INJECTED: injected} if injected else {}
            )
        assert journal.kept == min(number, 16)
        kept = list(range(max(1, number - 15), number + 1))
        assert [entry.seq for entry in journal.read()] == kept
        for since in (0, number - 20, number - 16, number - 3, number, number + 2):  # before, in and after what is kept
            assert [entry.seq for entry in journal.read(Query(since=since))] == [seq for seq in kept if seq > since]
            assert [entry.seq for entry in journal.read(Query(since=since, limit=2))] == [
                seq for seq in kept if seq > since
            ][-2:]
        assert journal.dropped == max(0, number - 16)
        assert len(journal._captures) <= 16 + 2  # held until let go, an eighth of the capacity at a time
    assert journal.get(23) is None
    assert journal.get(24) is not None
    assert journal.clear() == 16
    assert (journal.last, journal.kept, journal.dropped, journal.read()) == (39, 0, 23, [])
    assert journal.counts() == {Source.MOCKED: 26, Source.INJECTED: 13}


def test_a_limit_is_the_newest_that_match_and_clearing_counts_on() -> None:
    tap = JournalTap(Journal(10), Redactor())
    for number in range(1, 8):
        answer(tap, request("odd" if number % 2 else "even"))
    journal = tap.journal
    assert [entry.seq for entry in journal.read(Query(test_id="odd", limit=2))] == [5, 7]
    assert [entry.seq for entry in journal.read(Query(test_id="odd", since=5, limit=5))] == [7]
    assert journal.clear() == 7
    answer(tap, request("odd"))
    assert [entry.seq for entry in journal.read()] == [8]
    assert (journal.dropped, journal.counts()) == (0, {Source.MOCKED: 8})


def test_a_listing_shows_what_the_whole_exchange_shows_its_key_redacted() -> None:
    tap = JournalTap(Journal(10), Redactor())
    answer(tap, request("t", f"/v1/chat/completions?key={KEY}&api-version=1"))
    (entry,) = tap.journal.read(Query(provider="openai", model="gpt-4o-mini", path="/v1/chat"))
    glance, exchange = entry.glance, entry.exchange
    assert KEY not in glance.url
    assert glance.url == exchange.request.url
    assert (glance.provider, glance.operation, glance.model, glance.streaming) == (
        exchange.provider,
        exchange.operation,
        exchange.model,
        exchange.streaming,
    )
    assert glance.status == 200
    assert glance.usage is not None
    assert (glance.usage.input_tokens, glance.usage.output_tokens) == (12, 3)


def test_exchanges_read_whole_are_kept_for_the_last_few_read_only() -> None:
    tap = JournalTap(Journal(3 * RECENT), Redactor())
    for number in range(3 * RECENT):
        answer(tap, request(f"t{number}"))
    journal = tap.journal
    first = journal.get(1)
    assert first is not None
    shown = first.exchange.model_dump(mode="json")
    read = []
    for entry in journal.read():
        exchange = entry.exchange  # each read whole, as `GET /journal/{seq}` reads it
        assert exchange.id == entry.seq
        read.append(weakref.ref(exchange))
    for entry in journal.read():
        exchange = entry.converted()  # as a report reads them: none kept
        assert exchange.id == entry.seq
        read.append(weakref.ref(exchange))
    del exchange
    assert sum(1 for kept in read if kept() is not None) == RECENT  # the last read, not one for every entry
    again = journal.get(1)
    assert again is first  # the entry is kept; only its exchange was let go
    assert again.exchange.model_dump(mode="json") == shown  # read again, the same
    assert journal.get(1).exchange is again.exchange  # and kept while it is among the last read
