"""llmproxy's in-process proxy (llmproxy_addons/proxy.py, plus the --map addon `record` also loads) with no recorder,
to tell the recorder's cost from the cost of the proxy it runs in.

    python scripts/bench/core_proxy.py --port P

Streams event-stream answers as `llmproxy record` does and buffers everything else, like bare mitmdump.
Prints its URL on stdout and runs until SIGTERM.
"""

import argparse
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mitmproxy import http

from llmproxy_addons.proxy import ProxySettings, ProxyThread
from llmproxy_addons.upstreams import Upstreams


class StreamEvents:
    def responseheaders(self, flow: http.HTTPFlow) -> None:
        assert flow.response is not None
        if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
            flow.response.stream = True


def stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, stop)
    with tempfile.TemporaryDirectory() as confdir:
        settings = ProxySettings(confdir=Path(confdir), listen_port=args.port)
        with ProxyThread(settings, [StreamEvents(), Upstreams({})]) as proxy:
            print(proxy.url, flush=True)
            signal.pause()


if __name__ == "__main__":
    main()
