"""An event loop on a thread of its own, started and stopped from another: mitmproxy's (`proxy.ProxyThread`) and
the lean door's (`ServingThread`: the relay, the lean door and its base-URL listener, each told when the loop
starts serving (`running`) and stops (`done`), as mitmproxy tells its addons)."""

import asyncio
import threading
from collections.abc import Sequence
from typing import Protocol, Self

from llmproxy.errors import LlmproxyError

_START_TIMEOUT = 15.0
_DRAIN_TIMEOUT = 2.0


class LoopThread:
    """`_serve` runs on the thread's loop: it sets `_ready` once serving, then waits for `_stop`; what it raises
    before it is ready is what `start` raises."""

    def __init__(self, name: str) -> None:
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None

    def start(self) -> Self:
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT):
            raise LlmproxyError("the proxy did not start within 15 s")
        if self._failure is not None:
            self._thread.join()
            raise LlmproxyError(f"the proxy could not start: {self._failure}") from self._failure
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()

    def _run(self) -> None:
        try:
            asyncio.run(self._serving())
        except BaseException as error:  # reported to start(); the thread must not die silently
            self._failure = self._failure or error
            self._ready.set()

    async def _serving(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        await self._serve()

    async def _serve(self) -> None:
        raise NotImplementedError


class Served(Protocol):
    async def running(self) -> None: ...

    async def done(self) -> None: ...


class ServingThread(LoopThread):
    def __init__(self, parts: Sequence[Served]) -> None:
        super().__init__("llmproxy-lean-door")
        self.parts = list(parts)

    async def _serve(self) -> None:
        assert self._stop is not None
        try:
            for part in self.parts:
                await part.running()
            self._ready.set()
            await self._stop.wait()
        finally:
            for part in self.parts:
                await part.done()
            await _drained()


async def _drained() -> None:
    """Let what is being answered finish briefly (a paced stream, say); what is left is cut when the loop ends."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _DRAIN_TIMEOUT
    current = asyncio.current_task()
    while loop.time() < deadline and any(task is not current and not task.done() for task in asyncio.all_tasks()):
        await asyncio.sleep(0.02)
