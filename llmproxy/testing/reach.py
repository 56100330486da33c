"""What the plugin's proxy lets out and where it sends it, the same for every test of the run: read from the
command line, the ini file and the environment when pytest starts, light enough that a run with no llmproxy
test pays nothing for it (the proxy's parts load at the first test that uses them)."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from llmproxy.background_traffic import KNOWN, BackgroundTraffic
from llmproxy.egress import EgressPolicy
from llmproxy.environment import PROXY_VARIABLES

if TYPE_CHECKING:
    from llmproxy.providers.declared import Declaration


LOCAL_SERVICES: Final = EgressPolicy(local_services=True)
NETWORK_VARIABLES: Final = (*PROXY_VARIABLES, "NO_PROXY", "no_proxy", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")


@dataclass(frozen=True, slots=True)
class Reach:
    """`--llmproxy-map` (HOST → URL), `--llmproxy-route` declarations, what a test that replays may reach:
    `--llmproxy-allow-host` entries, and this machine's own services (loopback, but for LLM API calls — a tool
    server the test started is its fixture, which no cassette holds), and what is background traffic (the
    shapes llmproxy knows, and the `--llmproxy-background-host` hosts)."""

    mapping: Mapping[str, str] = field(default_factory=dict)
    routes: tuple["Declaration", ...] = ()
    egress: EgressPolicy = LOCAL_SERVICES
    # how the network was reached before the plugin set the tests' variables to its proxy: the proxy it goes on
    # through (`llmproxy.upstream_proxy`) and the CA bundle clients trusted, which it trusts upstream
    network: Mapping[str, str] = field(default_factory=dict)
    background: BackgroundTraffic = KNOWN


DEFAULT_REACH: Final = Reach()  # no option given
