"""A Python client family fetches URL through PROXY, trusting what it trusts by default.

    python probe.py FAMILY PROXY URL TOKEN      (FAMILY: python, requests, httpx, httpx2, botocore)

Run by `llmproxy doctor` with the interpreter and environment under test; prints one JSON line.
"""

import importlib
import json
import sys
from typing import Any


def fetch(family: str, proxy: str, url: str) -> bytes:
    if family == "python":  # the ssl module's default context, as urllib and the standard library use it
        request: Any = importlib.import_module("urllib.request")
        opener = request.build_opener(request.ProxyHandler({"https": proxy}))
        return bytes(opener.open(url, timeout=30).read())
    if family == "requests":
        requests: Any = importlib.import_module("requests")
        return bytes(requests.get(url, proxies={"https": proxy}, timeout=30).content)
    if family in ("httpx", "httpx2"):
        client: Any = importlib.import_module(family)
        return bytes(client.get(url, proxy=proxy, timeout=30).content)
    # botocore: the CA bundle it resolves (AWS_CA_BUNDLE, then ~/.aws/config), over its own transport
    session: Any = importlib.import_module("botocore.session").Session()
    transport: Any = importlib.import_module("botocore.httpsession")
    prepared = importlib.import_module("botocore.awsrequest").AWSRequest("GET", url).prepare()
    verify = session.get_config_variable("ca_bundle") or True
    return bytes(transport.URLLib3Session(verify=verify, proxies={"https": proxy}).send(prepared).content)


def main(family: str, proxy: str, url: str, token: str) -> dict[str, str]:
    try:
        body = fetch(family, proxy, url)
    except ImportError as error:
        return {"outcome": "skipped", "detail": f"{error.name} is not installed for {sys.executable}"}
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        untrusted = "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text
        return {"outcome": "untrusted" if untrusted else "failed", "detail": text[:400]}
    found = token.encode() in body
    return {"outcome": "trusted" if found else "failed", "detail": body[:200].decode("utf-8", "replace")}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
