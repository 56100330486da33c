import threading
import time

import pytest

from llmproxy.errors import UsageError
from llmproxy.intercept.counters import Count
from llmproxy.intercept.redis_store import RedisStore
from llmproxy.intercept.store import MemoryStore


def test_memory_admits_up_to_the_limit_then_refuses_until_the_window_ends() -> None:
    store = MemoryStore()
    assert [store.admit("k", 1, 3, 1000, 100).admitted for _ in range(4)] == [True, True, True, False]
    assert store.admit("k", 1, 3, 1000, 600) == Count(3, 500, admitted=False)
    assert store.admit("k", 1, 3, 1000, 1100) == Count(1, 1000)  # a new window starts at its first count


def test_memory_admit_counts_nothing_when_the_amount_would_go_over() -> None:
    store = MemoryStore()
    store.admit("k", 7, 10, 1000, 0)
    assert not store.admit("k", 4, 10, 1000, 1).admitted
    assert store.admit("k", 3, 10, 1000, 2) == Count(10, 998)


def test_memory_add_counts_whatever_the_total_and_peek_counts_nothing() -> None:
    store = MemoryStore()
    assert store.peek("t", 60_000, 0) == Count(0, 0)
    store.add("t", 50_000, 60_000, 1000)
    assert store.add("t", 20_000, 60_000, 2000) == Count(70_000, 59_000)
    assert store.peek("t", 60_000, 3000) == Count(70_000, 58_000)
    assert store.peek("t", 60_000, 61_000) == Count(0, 0)  # the window ended


def test_memory_without_a_window_never_forgets() -> None:
    store = MemoryStore()
    store.add("budget", 5, 0, 0)
    assert store.add("budget", 5, 0, 10**12) == Count(10, 0)


def test_redis_admits_exactly_the_limit_between_two_proxies(fresh_redis: str) -> None:
    first, second = RedisStore(fresh_redis), RedisStore(fresh_redis)
    admitted = []

    def hammer(store: RedisStore) -> None:
        for _ in range(60):
            admitted.append(store.admit("quota:shared:requests", 1, 50, 60_000, 0).admitted)

    threads = [threading.Thread(target=hammer, args=(store,)) for store in (first, second, first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert admitted.count(True) == 50
    assert first.peek("quota:shared:requests", 60_000, 0).used == 50
    first.close()
    second.close()


def test_redis_windows_expire_on_the_servers_clock(fresh_redis: str) -> None:
    store = RedisStore(fresh_redis)
    assert store.admit("k", 1, 1, 80, 0).admitted
    refused = store.admit("k", 1, 1, 80, 0)
    assert not refused.admitted
    assert 0 < refused.reset_ms <= 80

    time.sleep(refused.reset_ms / 1000 + 0.02)  # the window's own end, as Redis measures it
    assert store.admit("k", 1, 1, 80, 0).admitted


def test_redis_adds_and_peeks_like_memory(fresh_redis: str) -> None:
    store = RedisStore(fresh_redis)
    assert store.peek("t", 60_000, 0) == Count(0, 0)
    assert store.add("t", 40, 60_000, 0).used == 40
    count = store.peek("t", 60_000, 0)
    assert count.used == 40
    assert 59_000 < count.reset_ms <= 60_000
    store.add("budget", 7, 0, 0)
    assert store.add("budget", 7, 0, 0) == Count(14, 0)  # no window: no expiry


def test_namespaces_keep_counters_apart(redis_url: str) -> None:
    one, two = RedisStore(f"{redis_url}?namespace=ns-one"), RedisStore(f"{redis_url}?namespace=ns-two")
    one.add("budget", 3, 0, 0)
    assert two.peek("budget", 0, 0).used == 0
    assert one.describe() == f"in Redis at {redis_url}"


def test_an_unreachable_redis_fails_at_start_in_one_line(refusing_port: int) -> None:
    with pytest.raises(UsageError) as raised:
        RedisStore(f"redis://127.0.0.1:{refusing_port}/0")
    message = str(raised.value)
    assert message.startswith(f"--state redis://127.0.0.1:{refusing_port}/0: cannot use Redis: ")
    assert "\n" not in message


@pytest.mark.parametrize("url", ["http://127.0.0.1:6379", "redis://", "127.0.0.1:6379"])
def test_a_state_that_is_not_a_redis_url_is_refused(url: str) -> None:
    with pytest.raises(UsageError, match="expected redis://HOST:PORT/N"):
        RedisStore(url)
