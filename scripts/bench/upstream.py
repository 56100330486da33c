"""A fast fake Anthropic upstream on 127.0.0.1, run as a process of its own so it shares no GIL with the
proxy or the client.

    python scripts/bench/upstream.py [--events N] [--interval-ms MS] [--delta-chars C] [--reply-bytes B]

Prints its port on stdout, then serves HTTP/1.1 keep-alive until killed: POST /v1/messages answers a small
JSON message (about B bytes with `--reply-bytes`), or, when the body asks for `"stream": true`, an SSE
stream of N content_block_delta events MS apart, each its own chunk (chunked encoding), its text stamped
with the time it was sent (and padded with prose to about C characters with `--delta-chars`).
"""

import argparse
import asyncio

import payloads


def json_answer(reply: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nrequest-id: req_bench\r\ncontent-length: %d\r\n\r\n"
    return head % len(reply) + reply


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"request-id: req_bench\r\ntransfer-encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Server(asyncio.Protocol):
    """One client connection: parse requests as bytes arrive, answer each in order."""

    def __init__(self, events: int, interval: float, chars: int, answer: bytes) -> None:
        self.events, self.interval, self.chars, self.answer = events, interval, chars, answer
        self.buffer = bytearray()
        self.streaming = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.serve()

    def serve(self) -> None:
        while not self.streaming:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).lower()
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line.startswith(b"content-length:"):
                    length = int(line[15:])
            if len(self.buffer) < end + 4 + length:
                return
            body = bytes(self.buffer[end + 4 : end + 4 + length])
            del self.buffer[: end + 4 + length]
            if b'"stream": true' in body or b'"stream":true' in body:
                self.streaming = True
                asyncio.get_running_loop().create_task(self.stream())
            else:
                self.transport.write(self.answer)

    async def stream(self) -> None:
        loop = asyncio.get_running_loop()
        self.transport.write(STREAM_HEAD + chunk(payloads.stream_head()))
        start = loop.time()
        for i in range(1, self.events + 1):
            await asyncio.sleep(max(0.0, start + i * self.interval - loop.time()))
            if self.transport.is_closing():
                return
            self.transport.write(chunk(payloads.stream_delta(self.chars)))
        self.transport.write(chunk(payloads.stream_tail(self.events)) + b"0\r\n\r\n")
        self.streaming = False
        self.serve()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval-ms", type=float, default=5.0)
    parser.add_argument("--delta-chars", type=int, default=0, help="each delta's text (default: the stamp alone)")
    parser.add_argument("--reply-bytes", type=int, default=0, help="the size of the JSON answer (default: small)")
    args = parser.parse_args()
    answer = json_answer(payloads.reply(args.reply_bytes))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: Server(args.events, args.interval_ms / 1000, args.delta_chars, answer), "127.0.0.1", 0, backlog=256
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
