"""Content decoding (``Content-Encoding``): incremental for streams captured as they pass, whole for bodies.

One decoder per stream; `decode` takes wire chunks as they arrive and returns whatever decoded bytes they
complete, `flush` the rest at the end. Stacked encodings (``deflate, gzip``: deflated, then gzipped) are
undone last one first. Errors are the codec libraries' own; `StreamCapture` turns them into a warning and
keeps the raw bytes, and `decode_body` into the reason the body is stored as not decodable.
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


class _Stacked:
    """Several encodings: each decoder's output is the next one's input."""

    def __init__(self, decoders: list[Decoder]) -> None:
        self._decoders = decoders

    def decode(self, chunk: bytes) -> bytes:
        for decoder in self._decoders:
            chunk = decoder.decode(chunk)
        return chunk

    def flush(self) -> bytes:
        data = b""
        for decoder in self._decoders:
            data = decoder.decode(data) + decoder.flush() if data else decoder.flush()
        return data


def decoder_for(content_encoding: str | None) -> Decoder | None:
    """The decoder for an encoding, or a list of them; None for no encoding. Raises ValueError for one
    llmproxy cannot undo."""
    names = [name.strip().lower() for name in (content_encoding or "").split(",")]
    decoders = [_one(name, content_encoding) for name in reversed(names) if name not in ("", "identity")]
    if not decoders:
        return None
    return decoders[0] if len(decoders) == 1 else _Stacked(decoders)


def decode_body(data: bytes, content_encoding: str | None) -> tuple[bytes, str | None]:
    """A whole body decoded, and None; or, when it cannot be, the bytes as they are and why."""
    try:
        decoder = decoder_for(content_encoding)
        if decoder is None:
            return data, None
        return decoder.decode(data) + decoder.flush(), None
    except Exception as exc:  # any codec's error (zlib.error, brotli.error, zstd errors, ValueError)
        return data, f"{content_encoding}: {exc}"


def _one(encoding: str, header: str | None) -> Decoder:
    if encoding in ("gzip", "x-gzip", "deflate"):
        return _Zlib(gzip=encoding != "deflate")
    if encoding == "br":
        return _Brotli()
    if encoding == "zstd":
        return _Zstd()
    raise ValueError(f"unsupported content-encoding {header!r}")
