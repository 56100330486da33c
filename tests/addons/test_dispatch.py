"""The caching hook dispatch behaves as mitmproxy's own: every handler in chain order, sub-addons included,
errors logged without stopping the others, AddonHalt ending the event, added addons seen at once."""

import asyncio
import logging

import pytest
from mitmproxy import exceptions, hooks, options
from mitmproxy.master import Master
from mitmproxy.proxy.layers.http import HttpRequestHook
from mitmproxy.test import tflow

from llmproxy_addons import dispatch


class Recording:
    def __init__(self, name: str, calls: list[str], fail: type[BaseException] | None = None) -> None:
        self.name = name
        self.calls = calls
        self.fail = fail

    def request(self, flow: object) -> None:
        self.calls.append(self.name)
        if self.fail is not None:
            raise self.fail("boom")


class Asynchronous(Recording):
    async def request(self, flow: object) -> None:  # type: ignore[override]
        await asyncio.sleep(0)
        self.calls.append(self.name)


class Parent:
    name = "parent"

    def __init__(self, child: Recording) -> None:
        self.addons = [child]


def _trigger(*addons: object, then: object | None = None) -> None:
    async def run() -> None:
        master = Master(options.Options())
        dispatch.install(master)
        master.addons.add(*addons)
        await master.addons.trigger_event(HttpRequestHook(tflow.tflow()))
        await master.addons.trigger_event(hooks.UpdateHook([]))  # no handler: nothing happens
        if then is not None:
            master.addons.add(then)
            await master.addons.trigger_event(HttpRequestHook(tflow.tflow()))

    asyncio.run(run())


def test_handlers_run_in_chain_order_sync_async_and_sub_addons() -> None:
    calls: list[str] = []
    _trigger(Recording("a", calls), Asynchronous("b", calls), Parent(Recording("child", calls)))
    assert calls == ["a", "b", "child"]


def test_an_error_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []
    with caplog.at_level(logging.ERROR):
        _trigger(Recording("a", calls, fail=ValueError), Recording("b", calls))
    assert calls == ["a", "b"]
    assert any("Addon error: boom" in record.getMessage() for record in caplog.records)


def test_addon_halt_ends_the_event() -> None:
    calls: list[str] = []
    _trigger(Recording("a", calls, fail=exceptions.AddonHalt), Recording("b", calls))
    assert calls == ["a"]


def test_an_addon_added_later_is_dispatched_to() -> None:
    calls: list[str] = []
    _trigger(Recording("a", calls), then=Recording("late", calls))
    assert calls == ["a", "a", "late"]
