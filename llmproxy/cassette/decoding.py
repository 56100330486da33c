"""Incremental content decoding (``Content-Encoding``) for streams that must be captured as they pass.

One decoder per stream; `decode` takes wire chunks as they arrive and returns whatever decoded bytes they
complete, `flush` the rest at the end. Errors are the codec libraries' own; `StreamCapture` turns them into
a warning and keeps the raw bytes.
"""

import zlib
from typing import Protocol

import brotli  # type: ignore[import-untyped]
import zstandard


class Decoder(Protocol):
    def decode(self, chunk: bytes) -> bytes: ...
    def flush(self) -> bytes: ...


class _Zlib:
    """gzip, or deflate with or without the zlib wrapper (servers send both under ``deflate``)."""

    def __init__(self, gzip: bool) -> None:
        self._obj: zlib._Decompress | None = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
        self._head = b""

    def decode(self, chunk: bytes) -> bytes:
        if self._obj is None:  # deflate: the first two bytes say whether a zlib header is present
            self._head += chunk
            if len(self._head) < 2:
                return b""
            chunk, self._head = self._head, b""
            wrapped = chunk[0] & 0x0F == 8 and int.from_bytes(chunk[:2]) % 31 == 0
            self._obj = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._obj.decompress(chunk)

    def flush(self) -> bytes:
        if self._obj is None:
            if self._head:
                raise zlib.error("deflate stream ended after one byte")
            return b""
        return self._obj.flush()


class _Brotli:
    def __init__(self) -> None:
        self._obj = brotli.Decompressor()

    def decode(self, chunk: bytes) -> bytes:
        return bytes(self._obj.process(chunk))

    def flush(self) -> bytes:
        return b""


class _Zstd:
    def __init__(self) -> None:
        self._obj = zstandard.ZstdDecompressor().decompressobj()

    def decode(self, chunk: bytes) -> bytes:
        return self._obj.decompress(chunk)

    def flush(self) -> bytes:
        return b""


def decoder_for(content_encoding: str | None) -> Decoder | None:
    """The decoder for an encoding; None for no encoding. Raises ValueError for one llmproxy cannot undo."""
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Zlib(gzip=encoding != "deflate")
    if encoding == "br":
        return _Brotli()
    if encoding == "zstd":
        return _Zstd()
    raise ValueError(f"unsupported content-encoding {content_encoding!r}")
