"""What the mock's SDK tests share: a `mocking()` session serving an expectations document, and the official
SDKs pointed at it as users point them at a proxy — the real host names, llmproxy's CA trusted."""

import json
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from llmproxy.session import Listening, Session, mocking


def serving(factory: pytest.TempPathFactory, expectations: dict[str, Any]) -> Iterator[Session]:
    """A mock session for a module-scoped fixture: `yield from serving(tmp_path_factory, {...})`."""
    directory = factory.mktemp("mock")
    path = directory / "expectations.json"
    path.write_text(json.dumps(expectations))
    with mocking(path, Listening(ca_directory=directory / "ca")) as session:
        yield session


def bundle(proxy: Session) -> str:
    return proxy.environment["SSL_CERT_FILE"]


def trusting(proxy: Session) -> ssl.SSLContext:
    """TLS that trusts llmproxy's CA, for the httpx-based SDKs."""
    return ssl.create_default_context(cafile=bundle(proxy))


@contextmanager
def anthropic_client(proxy: Session, retries: int = 0) -> Iterator[Any]:
    import anthropic

    http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=trusting(proxy))
    with anthropic.Anthropic(api_key="sk-ant-test", http_client=http, max_retries=retries) as client:
        yield client


@contextmanager
def openai_client(proxy: Session, retries: int = 0) -> Iterator[Any]:
    import openai

    http = openai.DefaultHttpxClient(proxy=proxy.url, verify=trusting(proxy))
    with openai.OpenAI(api_key="sk-test", http_client=http, max_retries=retries) as client:
        yield client


@contextmanager
def azure_client(proxy: Session) -> Iterator[Any]:
    import openai

    http = openai.DefaultHttpxClient(proxy=proxy.url, verify=trusting(proxy))
    with openai.AzureOpenAI(
        azure_endpoint="https://llmproxy-test.openai.azure.com",
        api_key="azure-key",
        api_version="2024-10-21",
        http_client=http,
        max_retries=0,
    ) as client:
        yield client


@contextmanager
def bedrock_client(proxy: Session, attempts: int = 1) -> Iterator[Any]:
    import boto3
    from botocore.config import Config

    config = Config(proxies={"https": proxy.url}, retries={"mode": "standard", "total_max_attempts": attempts})
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIA" + "0" * 16,  # a made-up key of the right shape
        aws_secret_access_key="example-secret",
        verify=bundle(proxy),
        config=config,
    )
    try:
        yield client
    finally:
        client.close()
