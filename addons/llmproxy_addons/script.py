"""llmproxy's answer chain inside your own mitmproxy — mitmdump, mitmweb or mitmproxy — loaded as a script:

    mitmdump -s "$(llmproxy addon-path)" --set llmproxy_replay=cassettes/session.json

Say what to do with one of these options (docs/mitmproxy.md lists them all):

* `llmproxy_record=FILE`: record LLM exchanges into FILE;
* `llmproxy_replay=FILE` (repeatable): serve recorded exchanges, strictly and offline unless
  `llmproxy_record_mode` says otherwise (`once`, `new_episodes`, `all`, `rewrite`: vcrpy's meanings);
* `llmproxy_mock=FILE`: answer from an expectations file, then from `llmproxy_replay`'s cassettes.

The same plans, chain and doors as `llmproxy record|replay|mock` (`run.addons_for`); your mitmproxy keeps its
own listeners, modes and addons. Changing an option while it runs (mitmweb's options page) ends the session —
its summary is logged — and starts the new one.
"""

import asyncio
import inspect
import logging
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Optional

from mitmproxy import ctx, exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.proxy.server_hooks import ServerConnectionHookData

from llmproxy.cassette import redacted_logs
from llmproxy.cassette.presets import PRESETS
from llmproxy.cassette.replay_index import MatchOptions
from llmproxy.errors import LlmproxyError
from llmproxy.plan import Plan, RecordMode, mock_plan, parse_timing, record_plan, replay_plan
from llmproxy.providers import declared
from llmproxy.proxy_session import Listening, Session
from llmproxy_addons.run import addons_for
from llmproxy_addons.stream_relay import StreamRelay
from llmproxy_addons.upstreams import Upstreams

logger = logging.getLogger(__name__)

_OPTIONS = ("record", "replay", "mock", "record_mode", "timing", "miss_status", "allow_host", "preset", "route")


class Llmproxy:
    """One addon for mitmproxy to load; it hands each hook to the parts of the session the options ask for."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.parts: list[object] = []
        self._running = False
        self._context = ExitStack()

    def load(self, loader: Loader) -> None:
        redacted_logs.install()
        loader.add_option("llmproxy_record", str, "", "Record LLM exchanges into this cassette.")
        loader.add_option("llmproxy_replay", Sequence[str], [], "Serve this cassette's exchanges (repeatable).")
        loader.add_option("llmproxy_mock", str, "", "Answer from this expectations file (docs/mock.md).")
        loader.add_option(
            "llmproxy_record_mode", str, "none", "For llmproxy_replay: none, once, new_episodes, all or rewrite."
        )
        loader.add_option("llmproxy_timing", str, "recorded", "Replayed streams: recorded, instant, or a scale.")
        loader.add_option(
            "llmproxy_miss_status",
            Optional[int],  # type: ignore[arg-type]  # noqa: UP045 (mitmproxy takes typing's forms, not `int | None`)
            None,
            "The status of a request nothing answers (default: the API's own invalid-request error, not retried).",
        )
        loader.add_option("llmproxy_allow_host", Sequence[str], [], "Let traffic to this host out (strict replay).")
        loader.add_option("llmproxy_preset", str, "", "Replay: ignore what this client varies between runs.")
        loader.add_option("llmproxy_route", Sequence[str], [], "HOST=CODEC|VENDOR, as --route.")

    def configure(self, updated: set[str]) -> None:
        if not any(name.removeprefix("llmproxy_") in _OPTIONS for name in updated):
            return
        try:
            plan = plan_of(ctx.options)
            session = Session.of(plan) if plan is not None else None
        except LlmproxyError as error:  # said here too: mitmdump shows only "error in script" for it
            logger.error("llmproxy: %s", error)
            raise exceptions.OptionsError(f"llmproxy: {error}") from error
        self._end()
        if session is None:
            return
        self.session = session
        self._context.enter_context(declared.declared(session.plan.routes))
        self.parts = addons_for(session, Upstreams({}), Listening())
        logger.info("llmproxy: %s\n%s", session.describe, session.chain.explain())
        if self._running:  # options changed while serving: the new relay serves at once
            asyncio.get_running_loop().create_task(self._start())

    async def running(self) -> None:
        self._running = True
        await self._start()

    async def done(self) -> None:
        self._end()

    async def _start(self) -> None:
        for part in self.parts:
            if isinstance(part, StreamRelay):
                await part.running()
                if self.session is not None and self.session.plan.base_url:
                    logger.warning("llmproxy: base URL http://127.0.0.1:%d for clients set by base URL", part.port)
        if self.session is not None:
            self.session.start()

    def _end(self) -> None:
        for part in self.parts:
            if isinstance(part, StreamRelay):
                part.close()
        self.parts = []
        self._context.close()
        session, self.session = self.session, None
        if session is not None:
            try:
                logger.warning("llmproxy: %s", session.close())
            except LlmproxyError as error:
                logger.error("llmproxy: %s\n%s", error, session.summary)

    async def _each(self, hook: str, *args: Any) -> None:
        for part in self.parts:
            handler = getattr(part, hook, None)
            if handler is not None:
                result = handler(*args)
                if inspect.isawaitable(result):
                    await result

    # mitmproxy's hooks, each handed to the session's parts (the doors, the WebSocket recorder, the gate)
    async def request(self, flow: http.HTTPFlow) -> None:
        await self._each("request", flow)

    async def responseheaders(self, flow: http.HTTPFlow) -> None:
        await self._each("responseheaders", flow)

    async def response(self, flow: http.HTTPFlow) -> None:
        await self._each("response", flow)

    async def error(self, flow: http.HTTPFlow) -> None:
        await self._each("error", flow)

    async def server_connect(self, data: ServerConnectionHookData) -> None:
        await self._each("server_connect", data)

    async def websocket_start(self, flow: http.HTTPFlow) -> None:
        await self._each("websocket_start", flow)

    async def websocket_message(self, flow: http.HTTPFlow) -> None:
        await self._each("websocket_message", flow)

    async def websocket_end(self, flow: http.HTTPFlow) -> None:
        await self._each("websocket_end", flow)


def plan_of(options: Any) -> Plan | None:
    """The plan the `llmproxy_*` options ask for; None when they ask for nothing. Raises LlmproxyError naming
    the option."""
    cassettes = [Path(path) for path in options.llmproxy_replay]
    preset = options.llmproxy_preset or None
    if preset not in (None, "none", *PRESETS):
        raise LlmproxyError(f"llmproxy_preset: expected one of none, {', '.join(PRESETS)}, got {preset!r}")
    match, routes, miss_status = MatchOptions(preset), options.llmproxy_route, options.llmproxy_miss_status
    if options.llmproxy_mock:
        if options.llmproxy_record:
            raise LlmproxyError("llmproxy_mock and llmproxy_record cannot go together: the mock never forwards")
        mock = Path(options.llmproxy_mock)
        return mock_plan(
            mock, cassettes=cassettes, match=match, miss_status=options.llmproxy_miss_status, routes=routes
        )
    if cassettes:
        if options.llmproxy_record:
            raise LlmproxyError("llmproxy_replay records into its first cassette (llmproxy_record_mode)")
        try:
            mode = RecordMode(options.llmproxy_record_mode)
            timing = parse_timing(options.llmproxy_timing)
        except ValueError as error:
            raise LlmproxyError(f"llmproxy_record_mode or llmproxy_timing: {error}") from None
        return replay_plan(
            cassettes,
            mode=mode,
            match=match,
            timing=timing,
            miss_status=miss_status,
            allow_hosts=options.llmproxy_allow_host,
            routes=routes,
        )
    if options.llmproxy_record:
        return record_plan(Path(options.llmproxy_record), routes=routes)
    return None


addons = [Llmproxy()]
