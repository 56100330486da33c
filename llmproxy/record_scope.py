"""Which exchanges `llmproxy record` keeps: known LLM hosts, LLM API paths on any host, and what the user adds."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from llmproxy.providers.routes import detect, is_provider_host


@dataclass(frozen=True, slots=True)
class RecordScope:
    hosts: frozenset[str] = frozenset()  # `--record-host`: recorded whatever the path
    everything: bool = False  # `--record-all`

    @classmethod
    def of(cls, hosts: Iterable[str] = (), everything: bool = False) -> "RecordScope":
        return cls(frozenset(h.lower().rstrip(".") for h in hosts), everything)

    def includes(self, host: str, path: str, headers: Mapping[str, str], method: str) -> bool:
        return self.covers(host) or detect(host, path, headers, method=method) is not None

    def covers(self, host: str) -> bool:
        """Whether everything sent to `host` is recorded, whatever the path."""
        if self.everything:
            return True
        host = host.lower().rstrip(".")
        return host in self.hosts or is_provider_host(host)
