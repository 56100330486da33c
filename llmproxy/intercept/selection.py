"""Which of the chaos file's rules apply to a request, worked out once per kind of request — the rules never
change while an `Intercept` lives, so every request to the same place is matched alike. A request no rule
is for then costs a look-up, the first of the per-request costs an inactive profile must keep small
(docs/performance.md#chaos).

Requests are told apart by no more than the rules read: whether a request is an LLM API call when no rule
says where (the command line's shorthands apply to every one), its host when the rules name only hosts, and
otherwise its host, path, API and model.
"""

from collections.abc import Callable, Sequence
from typing import Final, Protocol

from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import Rule, RuleMatch
from llmproxy.model import Route

KINDS_KEPT: Final = 4096  # kinds of request whose rules are kept; more (a path per session?) start afresh

type Applying = tuple[tuple[str, ChaosProfile, str], ...]
"""Each rule that applies, in order: its name, its profile, and the name its requests are counted under."""


class Where(Protocol):
    """What a rule reads of a request."""

    @property
    def host(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def route(self) -> Route | None: ...
    @property
    def model(self) -> str | None: ...


class RuleSelection:
    """`selection(request)`: the rules that apply to it."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        self._kind = _kind_of_request(self.rules)
        self._applying: dict[object, Applying] = {}

    def __call__(self, request: Where) -> Applying:
        kind = self._kind(request)
        applying = self._applying.get(kind)
        if applying is None:
            applying = self._match(request)
            if len(self._applying) >= KINDS_KEPT:
                self._applying.clear()
            self._applying[kind] = applying
        return applying

    def _match(self, request: Where) -> Applying:
        route, model = request.route, request.model
        found = []
        for number, rule in enumerate(self.rules, 1):
            if rule.match.holds(request.host, request.path, route, model):
                name = rule.name or f"rule {number}"
                found.append((name, rule.chaos, name))
        return tuple(found)


def _kind_of_request(rules: Sequence[Rule]) -> Callable[[Where], object]:
    matches = [rule.match for rule in rules]
    if all(match == RuleMatch() for match in matches):
        return _is_llm
    if all(match.host is not None and match == RuleMatch(host=match.host) for match in matches):
        return _host
    return _where_and_what


def _is_llm(request: Where) -> object:
    return request.route is not None


def _host(request: Where) -> object:
    return request.host


def _where_and_what(request: Where) -> object:
    route = request.route
    return request.host, request.path, route.provider if route is not None else None, request.model
