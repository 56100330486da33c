"""Loopback replies that mock an embeddings or rerank API end to end, for the SDK conformance tests.

Each reply decodes the SDK's request with the codec, makes the mock result (llmproxy.mock.vectors) and
encodes it for that request, as the mock will in the proxy. Tests compare what the SDK parsed with
`expected`: ``codec.visible(result, request)``, what the wire can carry of the result.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from llmproxy.mock.vectors import embed, rerank
from llmproxy.model import EmbeddingRequest, EmbeddingResult, RerankRequest, RerankResult
from llmproxy.providers.base import ErrorReply
from llmproxy.providers.routes import detect
from llmproxy.providers.vectors import EmbeddingCodec, RerankCodec
from tests.conformance.server import Received, Reply

JSON = {"content-type": "application/json"}


def model_in_url(host: str) -> Callable[[str], str | None]:
    """The model a request's URL names, as detection reads it on `host`."""

    def model(path: str) -> str | None:
        route = detect(host, path)
        return route.model if route is not None else None

    return model


@dataclass
class EmbeddingMock:
    codec: EmbeddingCodec
    url_model: Callable[[str], str | None] | None = None
    seed: int | None = None
    served: list[tuple[EmbeddingRequest, EmbeddingResult]] = field(default_factory=list)

    def __call__(self, received: Received) -> Reply:
        request = self.codec.decode_request(received.body)
        if request.model is None and self.url_model is not None:
            request = replace(request, model=self.url_model(received.path))
        result = embed(request, seed=self.seed)
        self.served.append((request, result))
        return Reply(headers=JSON, body=self.codec.encode_response(result, request))

    @property
    def request(self) -> EmbeddingRequest:
        return self.served[-1][0]

    @property
    def expected(self) -> EmbeddingResult:
        request, result = self.served[-1]
        return self.codec.visible(result, request)


@dataclass
class RerankMock:
    codec: RerankCodec
    served: list[tuple[RerankRequest, RerankResult]] = field(default_factory=list)

    def __call__(self, received: Received) -> Reply:
        request = self.codec.decode_request(received.body)
        result = rerank(request)
        self.served.append((request, result))
        return Reply(headers=JSON, body=self.codec.encode_response(result, request))

    @property
    def request(self) -> RerankRequest:
        return self.served[-1][0]

    @property
    def expected(self) -> RerankResult:
        request, result = self.served[-1]
        return self.codec.visible(result, request)


def error_reply(reply: ErrorReply) -> Reply:
    return Reply(reply.status, reply.headers, reply.body)
