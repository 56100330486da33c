"""The `--allow-host` rules as pure decisions: by name and by the address a connection really reaches, with
every spelling of a local address an attacker might try (the proxy-level tests: tests/replay/test_allow_host.py)."""

import pytest

from llmproxy.egress import EgressPolicy, Permitted, Refused, is_public, literal, parse_entry
from llmproxy.errors import UsageError

GITHUB = EgressPolicy.parse(["api.github.com"])
LOCAL = EgressPolicy.parse(["127.0.0.1:8080"])


def test_a_named_host_goes_out_to_its_public_address_and_is_pinned_to_it() -> None:
    decision = GITHUB.check_connection("api.github.com", 443, "api.github.com", ["140.82.112.6", "140.82.112.5"])
    assert decision == Permitted("140.82.112.6")
    assert GITHUB.check_request("api.github.com", 443, ["api.github.com", "api.github.com"]) is None
    assert GITHUB.check_request("API.GitHub.com.", 443, ["api.github.com:443", None]) is None


@pytest.mark.parametrize(
    "resolved",
    [
        ["127.0.0.1"],  # loopback
        ["127.8.9.1"],
        ["::1"],
        ["::ffff:127.0.0.1"],  # IPv4-mapped loopback
        ["10.0.0.7"],  # private networks
        ["172.16.3.4"],
        ["192.168.1.1"],
        ["169.254.169.254"],  # link-local: the cloud metadata service
        ["fe80::1%eth0"],
        ["fd00::1"],  # unique local
        ["0.0.0.0"],  # reaches the local host on Linux
        ["100.64.0.1"],  # shared address space (carrier NAT)
        ["2002:7f00:1::1"],  # 6to4 of 127.0.0.1
        ["64:ff9b::7f00:1"],  # NAT64 of 127.0.0.1
        ["224.0.0.1"],
    ],
)
def test_an_allowed_name_that_resolves_to_a_non_public_address_is_refused(resolved: list[str]) -> None:
    decision = GITHUB.check_connection("api.github.com", 443, None, resolved)
    assert isinstance(decision, Refused)
    assert "an allowed name reaches only public addresses" in decision.reason
    assert "--allow-host " in decision.reason  # and says how to allow it on purpose


def test_of_a_name_resolving_to_public_and_local_addresses_only_the_public_is_used() -> None:
    assert GITHUB.check_connection("api.github.com", 443, None, ["127.0.0.1", "140.82.112.6"]) == Permitted(
        "140.82.112.6"
    )


def test_a_name_allowed_by_its_own_spelling_still_cannot_reach_loopback() -> None:
    policy = EgressPolicy.parse(["localhost"])
    assert policy.check_request("localhost", 8080, ["localhost:8080"]) is None
    assert isinstance(policy.check_connection("localhost", 8080, None, ["127.0.0.1", "::1"]), Refused)


def test_an_address_named_explicitly_is_reached_on_its_port_only() -> None:
    assert LOCAL.check_request("127.0.0.1", 8080, ["127.0.0.1:8080"]) is None
    assert LOCAL.check_connection("127.0.0.1", 8080, None, ["127.0.0.1"]) == Permitted("127.0.0.1")
    assert isinstance(LOCAL.check_request("127.0.0.1", 22, ["127.0.0.1:22"]), Refused)
    assert isinstance(LOCAL.check_connection("127.0.0.1", 22, None, ["127.0.0.1"]), Refused)
    anywhere = EgressPolicy.parse(["127.0.0.1"])
    assert anywhere.check_connection("127.0.0.1", 22, None, ["127.0.0.1"]) == Permitted("127.0.0.1")


@pytest.mark.parametrize(
    ("host", "names"),
    [
        ("127.0.0.1", ["api.github.com"]),  # absolute URI to 127.0.0.1 with Host: api.github.com
        ("127.0.0.1", ["127.0.0.1:8080", "api.github.com"]),  # CONNECT 127.0.0.1 then TLS SNI api.github.com
        ("api.github.com", ["evil.example"]),
        ("api.github.com", ["api.github.com.evil.example"]),
        ("api.github.com", ["api.github.com:notaport"]),
    ],
)
def test_a_host_or_tls_name_that_is_not_the_destination_is_refused(host: str, names: list[str]) -> None:
    policy = EgressPolicy.parse(["api.github.com", "127.0.0.1:8080"])
    decision = policy.check_request(host, 8080 if host == "127.0.0.1" else 443, names)
    assert isinstance(decision, Refused)


def test_the_tls_name_must_match_at_connection_time_too() -> None:
    policy = EgressPolicy.parse(["api.github.com", "127.0.0.1:8080"])
    refused = policy.check_connection("127.0.0.1", 8080, "api.github.com", ["127.0.0.1"])
    assert refused == Refused("the request names api.github.com but would go to 127.0.0.1: the names must match")


@pytest.mark.parametrize(
    "host",
    ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "localhost", "localhost.", "[::1]", "::ffff:7f00:1", "0"],
)
def test_other_spellings_of_loopback_are_not_what_an_address_entry_allows(host: str) -> None:
    """Shorthands are names (not the entry's address); standard IPv6 spellings of it are the address."""
    policy = EgressPolicy.parse(["api.github.com"])
    assert isinstance(policy.check_request(host, 8080, [host]), Refused)


def test_ipv6_and_mapped_spellings_of_an_allowed_address_are_that_address() -> None:
    policy = EgressPolicy.parse(["[::1]:8080", "127.0.0.1:8080"])
    assert policy.check_request("::1", 8080, ["[::1]:8080"]) is None
    assert policy.check_request("::ffff:127.0.0.1", 8080, ["[::ffff:127.0.0.1]:8080"]) is None
    assert policy.check_connection("::ffff:127.0.0.1", 8080, None, ["::ffff:127.0.0.1"]) == Permitted("127.0.0.1")


def test_configured_destinations_are_reached_as_configured() -> None:
    policy = EgressPolicy.parse([]).with_explicit([("127.0.0.1", 9000), ("Gateway.internal", 443)])
    assert policy.check_connection("127.0.0.1", 9000, "api.anthropic.com", ["127.0.0.1"]) == Permitted("127.0.0.1")
    assert policy.check_connection("gateway.internal", 443, None, []) == Permitted("gateway.internal")
    assert isinstance(policy.check_connection("127.0.0.1", 9001, None, ["127.0.0.1"]), Refused)


def test_nothing_goes_out_without_an_entry() -> None:
    nothing = EgressPolicy.parse([])
    assert nothing.check_request("api.github.com", 443, []) == Refused("no --allow-host entry names it")
    assert isinstance(nothing.check_connection("140.82.112.6", 443, None, ["140.82.112.6"]), Refused)


@pytest.mark.parametrize("value", ["https://api.github.com", "api.github.com:0", "api.github.com:x", "a b", ""])
def test_malformed_entries_are_usage_errors(value: str) -> None:
    with pytest.raises(UsageError, match="--allow-host"):
        parse_entry(value)


def test_entries_in_every_spelling() -> None:
    assert str(parse_entry("API.github.com:443")) == "api.github.com:443"
    assert str(parse_entry("[::1]:8080")) == "[::1]:8080"
    assert str(parse_entry("::1")) == "[::1]"
    assert str(parse_entry("::ffff:127.0.0.1")) == "127.0.0.1"


def test_public_means_globally_reachable() -> None:
    assert is_public(literal("140.82.112.6"))  # type: ignore[arg-type]
    assert is_public(literal("2606:4700::1"))  # type: ignore[arg-type]
    assert not is_public(literal("127.0.0.1"))  # type: ignore[arg-type]


def test_only_a_name_an_entry_allows_needs_looking_up() -> None:
    policy = EgressPolicy.parse(["api.github.com", "127.0.0.1:8080"]).with_explicit([("127.0.0.1", 9000)])
    assert policy.check_unresolved("api.github.com", 443, None) is None  # resolve, then check_connection
    assert policy.check_unresolved("evil.example", 443, None) == Refused("no --allow-host entry names it")
    assert policy.check_unresolved("127.0.0.1", 8080, None) == Permitted("127.0.0.1")
    assert policy.check_unresolved("127.0.0.1", 9000, None) == Permitted("127.0.0.1")
    assert isinstance(policy.check_unresolved("127.0.0.1", 22, None), Refused)


SERVICES = EgressPolicy.parse(["api.github.com"], local_services=True)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "[::1]", "::ffff:127.0.0.1", "localhost"])
def test_local_services_let_a_request_to_this_machine_out_unless_it_is_an_llm_api_call(host: str) -> None:
    assert SERVICES.check_request(host, 8080, [None]) is None
    refused = SERVICES.check_request(host, 8080, [None], llm_api=True)
    assert refused == Refused("an LLM API call on this machine is answered from the recording, not let out")
    refused = EgressPolicy().check_request(host, 8080, [None])
    assert isinstance(refused, Refused)
    assert refused.reason.startswith("no --allow-host entry names it; ")
    assert "pass through when llmproxy runs the command (-- CMD)" in refused.reason  # the fix, named
    named = {"::1": "[::1]", "[::1]": "[::1]", "::ffff:127.0.0.1": "127.0.0.1", "localhost": "127.0.0.1"}
    assert refused.reason.endswith(f"--allow-host {named.get(host, host)}:8080")  # an address: a name would not do


def test_an_address_entry_lets_a_local_llm_api_out_beside_local_services() -> None:
    policy = EgressPolicy.parse(["127.0.0.1:11434"], local_services=True)
    assert policy.check_request("127.0.0.1", 11434, [None], llm_api=True) is None
    assert policy.check_request("127.0.0.1", 11435, [None], llm_api=True) is not None


def test_local_services_connect_to_this_machine_only() -> None:
    assert SERVICES.check_unresolved("127.0.0.1", 8080, None) == Permitted("127.0.0.1")
    assert SERVICES.check_unresolved("localhost", 8080, None) is None  # looked up: a name for this machine
    assert SERVICES.check_connection("localhost", 8080, None, ["::1", "127.0.0.1"]) == Permitted("::1")
    refused = SERVICES.check_connection("localhost", 8080, None, ["203.0.113.9"])
    assert refused == Refused("localhost resolves to 203.0.113.9, not to this machine")
    assert SERVICES.check_unresolved("10.0.0.7", 8080, None) == Refused("no --allow-host entry names it")
    assert SERVICES.check_unresolved("example.com", 80, None) == Refused("no --allow-host entry names it")


def test_local_services_still_hold_the_client_to_the_names_it_gave() -> None:
    refused = SERVICES.check_request("127.0.0.1", 8080, ["api.github.com"])
    assert refused == Refused("the request names api.github.com but would go to 127.0.0.1: the names must match")
    assert SERVICES.check_request("localhost", 8080, ["localhost:8080"]) is None


def test_what_an_entry_names_on_a_port_or_any() -> None:
    policy = EgressPolicy.parse(["api.github.com", "203.0.113.5:443"])
    assert policy.names("API.GitHub.com.", None)
    assert policy.names("203.0.113.5", 443)
    assert policy.names("203.0.113.5", None)
    assert not policy.names("203.0.113.5", 80)
    assert not policy.names("example.com", None)
