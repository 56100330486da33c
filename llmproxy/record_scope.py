"""Which exchanges `llmproxy record` keeps: known LLM hosts, LLM API paths on any host, and what the user adds."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from llmproxy.providers.routes import detect, is_provider_host


@dataclass(frozen=True, slots=True)
class RecordScope:
    hosts: frozenset[str] = frozenset()  # `--record-host`: recorded whatever the path
    everything: bool = False  # `--record-all`
    background: frozenset[str] = frozenset()  # `--background-host`: never recorded, whatever else says so

    @classmethod
    def of(cls, hosts: Iterable[str] = (), everything: bool = False, background: Iterable[str] = ()) -> "RecordScope":
        return cls(_hosts(hosts), everything, _hosts(background))

    def includes(self, host: str, path: str, headers: Mapping[str, str], method: str) -> bool:
        if self.background and host.lower().rstrip(".") in self.background:
            return False
        return self.covers(host) or detect(host, path, headers, method=method) is not None

    def covers(self, host: str) -> bool:
        """Whether everything sent to `host` is recorded, whatever the path."""
        host = host.lower().rstrip(".")
        if host in self.background:
            return False
        return self.everything or host in self.hosts or is_provider_host(host)


def _hosts(hosts: Iterable[str]) -> frozenset[str]:
    return frozenset(host.lower().rstrip(".") for host in hosts)
