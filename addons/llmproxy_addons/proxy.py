"""Runs mitmproxy in-process: the one place that builds a Master (docs/mitmproxy.md#what-llmproxy-relies-on).

The Master runs on its own thread and event loop. `Master.run()` installs an eager task factory and an
exception handler on whatever loop it runs on, and mitmproxy dispatches every flow to the one global
Master, so it must not share a loop (or a process) with another. Only the addons a proxy needs are loaded:
mitmdump's ~35 default addons cost about 40% of its CPU in hook dispatch, and the
remaining dispatch resolves each hook's handlers once (dispatch.py).
"""

import asyncio
import errno
import logging
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mitmproxy.proxy.mode_specs import ProxyMode

from llmproxy.destinations import Destination
from llmproxy.errors import LlmproxyError
from llmproxy_addons import dispatch, thread_context
from llmproxy_addons.base_url import PLACEHOLDER as BASE_URL_PLACEHOLDER
from llmproxy_addons.lean_mitmproxy import (
    Master,
    core,
    disable_h2c,
    next_layer,
    proxyserver,
    tlsconfig,
    update_alt_svc,
    without_debug_typechecks,
)
from llmproxy_addons.listener import Listener
from llmproxy_addons.loop_thread import LoopThread
from llmproxy_addons.settled_options import SettledOptions

logger = logging.getLogger(__name__)


class _ListenErrorsReportedOnce(logging.Filter):
    """mitmproxy logs a listener that cannot start (and, stopping it, an empty error) at ERROR; llmproxy says
    the same in its own one-line error, so those records would only repeat it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.ERROR


_LISTEN_FILTER = _ListenErrorsReportedOnce()
logging.getLogger("mitmproxy.addons.proxyserver").addFilter(_LISTEN_FILTER)


class _TlsConfigLoadedOnce(tlsconfig.TlsConfig):
    """mitmproxy's TLS addon loads the CA again when the proxy starts running (its workaround for a
    `configure` that never saw `confdir`). Here `configure` always sees it, since the options are set after
    the addons are added, so the second load would only check the CA's RSA key again: 0.1-0.2 s a start."""

    def running(self) -> None:
        if self.certstore is None:
            super().running()


_START_TIMEOUT = 15.0
_PORT_ATTEMPTS = 5  # a port chosen here and taken before mitmproxy listens on it: chosen again, so many times
_DRAIN_TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class ProxySettings:
    confdir: Path
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    reverse: tuple[str, ...] = ()  # upstream base URLs, each served on a local port of its own
    upstream_ca: Path | None = None
    options: dict[str, object] = field(default_factory=dict)
    base_url_port: int | None = None  # llmproxy's own base URL (addons/base_url.py) on this port (0: a free one)


class ProxyThread(LoopThread):
    """A running proxy. ``with ProxyThread(settings, addons) as proxy: proxy.url`` — started on entry,
    stopped cleanly on exit: listeners closed first, then the Master, then live connections drained."""

    def __init__(self, settings: ProxySettings, addons: Sequence[object]) -> None:
        super().__init__("llmproxy-proxy")
        self.settings = settings
        self.addons = list(addons)
        self.listeners: list[Listener] = []  # the forward proxy, then the reverse listeners
        self.base_url: Listener | None = None

    @property
    def url(self) -> str:
        """The forward proxy's URL (for `HTTPS_PROXY`)."""
        return self.listeners[0].url

    def __enter__(self) -> "ProxyThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        assert self._stop is not None
        without_debug_typechecks()
        thread_context.install()  # this master serves this thread's connections, whatever else runs
        master = Master(SettledOptions())
        dispatch.install(master)
        needed: list[object] = [
            core.Core(),
            proxyserver.Proxyserver(),
            next_layer.NextLayer(),
            _TlsConfigLoadedOnce(),
            disable_h2c.DisableH2C(),
        ]
        if self.settings.reverse:
            needed.append(update_alt_svc.UpdateAltSvc())
        master.addons.add(*needed, *self.addons)
        modes = self._modes()
        # options registered by addons exist only after the addons are added (docs/mitmproxy.md#what-llmproxy-relies-on)
        master.options.update(
            listen_host=self.settings.listen_host,
            mode=[mode.spec for mode in modes],
            confdir=str(self.settings.confdir),
            # connect upstream only once a request is seen, so an addon can redirect or answer it first
            connection_strategy="lazy",
            ssl_verify_upstream_trusted_ca=str(self.settings.upstream_ca) if self.settings.upstream_ca else None,
            **self.settings.options,
        )
        run = asyncio.create_task(master.run())
        server = master.addons.get("proxyserver")
        try:
            for attempt in range(_PORT_ATTEMPTS):
                failed = await self._wait_listening(server, run)
                if failed is None:
                    break
                instance = list(server.servers)[failed]
                if not (modes[failed].chosen and _taken(instance.last_exception)) or attempt == _PORT_ATTEMPTS - 1:
                    raise LlmproxyError(_listen_failure(instance.mode, instance.last_exception))
                # another process took the port chosen here, between choosing it and listening: choose again
                modes[failed] = self._mode(modes[failed].target)
                master.options.update(mode=[mode.spec for mode in modes])
                await server.servers.update([ProxyMode.parse(mode.spec) for mode in modes])  # done when it returns
            self.listeners = [
                Listener(instance.mode.full_spec, self._listener_url(instance.listen_addrs), mode.target)
                for instance, mode in zip(server.servers, modes, strict=True)
            ]
            if self.settings.base_url_port is not None:
                self.base_url = self.listeners.pop()
            self._ready.set()
            await self._stop.wait()
        finally:
            await server.servers.update([])  # shutdown() alone leaves the ports open (mitmproxy #6245)
            master.shutdown()
            await run
            await self._drain(server)

    def _modes(self) -> list["_Mode"]:
        host, port = self.settings.listen_host, self.settings.listen_port
        modes = [_Mode(f"regular@{host}:{port}", None, chosen=False)]  # port 0: mitmproxy binds a free one itself
        for target in self.settings.reverse:
            Destination.parse(target, "--reverse")
            modes.append(self._mode(target))
        if self.settings.base_url_port:
            modes.append(_Mode(f"reverse:{BASE_URL_PLACEHOLDER}@{host}:{self.settings.base_url_port}", None, False))
        elif self.settings.base_url_port is not None:
            modes.append(self._mode(None))
        return modes

    def _mode(self, target: str | None) -> "_Mode":
        """A reverse listener on a port chosen here (mitmproxy needs the number in the mode): for `target`, or
        for llmproxy's own base URL (None)."""
        host = self.settings.listen_host
        if target is None:
            return _Mode(f"reverse:{BASE_URL_PLACEHOLDER}@{host}:{free_port(host)}", None, chosen=True)
        parts = urlsplit(target)
        return _Mode(f"reverse:{parts.scheme}://{parts.netloc}@{host}:{free_port(host)}", target, chosen=True)

    @staticmethod
    async def _wait_listening(server: proxyserver.Proxyserver, run: asyncio.Task[None]) -> int | None:
        """Once every listener listens: None; the index of the first that could not."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_TIMEOUT
        while loop.time() < deadline:
            if run.done():
                run.result()
                raise LlmproxyError("mitmproxy stopped while starting")
            instances = list(server.servers)
            if not server.servers.is_updating:
                failed = [index for index, i in enumerate(instances) if i.last_exception is not None]
                if failed:
                    return failed[0]
                if instances and all(i.is_running for i in instances):
                    return None
            await asyncio.sleep(0.01)
        raise LlmproxyError("the proxy did not start listening within 15 s")

    @staticmethod
    def _listener_url(addresses: Sequence[tuple[str, int] | tuple[str, int, int, int]]) -> str:
        host, port = addresses[0][0], addresses[0][1]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}"

    @staticmethod
    async def _drain(server: proxyserver.Proxyserver) -> None:
        """Let live connections finish briefly, then close the rest (their clients see a cut stream)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _DRAIN_TIMEOUT
        while server.connections and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for handler in list(server.connections.values()):
            handler.close_connection(handler.client)
        await asyncio.sleep(0)


@dataclass(frozen=True, slots=True)
class _Mode:
    spec: str  # the mitmproxy mode
    target: str | None  # the upstream of a reverse listener
    chosen: bool  # its port was chosen here, and may be chosen again


def _taken(error: object) -> bool:
    return isinstance(error, OSError) and error.errno == errno.EADDRINUSE


def _listen_failure(mode: ProxyMode, error: Exception | None) -> str:
    """``cannot listen on 127.0.0.1:8080: Address already in use`` (mitmproxy's own text is three times longer)."""
    host, port = mode.custom_listen_host or "*", mode.custom_listen_port
    reason = os.strerror(error.errno) if isinstance(error, OSError) and error.errno else str(error)
    return f"cannot listen on {host}:{port}: {reason}"


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago, for listeners that need a number before they bind."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])
