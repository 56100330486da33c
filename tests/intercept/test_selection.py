"""Which rules apply to a request, looked up once per kind of request: the same answer as matching every rule
anew, whichever requests came before."""

from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import Rule, RuleMatch
from llmproxy.intercept.selection import RuleSelection
from tests.intercept.requests import Request, openai

ERROR = ChaosProfile(errorStatus=500)
SETTINGS = Request("api.anthropic.com", "/api/claude_code/settings", None)


def names(selection: RuleSelection, request: Request) -> list[str]:
    return [name for name, _, _ in selection(request)]


def test_rules_without_a_match_apply_to_every_llm_call_and_nothing_else() -> None:
    selection = RuleSelection((Rule(name="--fail 500", chaos=ERROR), Rule(chaos=ERROR)))
    for _ in range(2):
        assert names(selection, Request()) == ["--fail 500", "rule 2"]
        assert names(selection, SETTINGS) == []
        assert names(selection, openai()) == ["--fail 500", "rule 2"]


def test_rules_naming_hosts_apply_to_those_hosts_in_any_case() -> None:
    selection = RuleSelection(
        (Rule(match=RuleMatch(host="API.openai.com"), chaos=ERROR), Rule(match=RuleMatch(host="x.test"), chaos=ERROR))
    )
    for _ in range(2):
        assert names(selection, openai()) == ["rule 1"]
        assert names(selection, Request()) == []
        assert names(selection, Request("X.test", "/anything", None)) == ["rule 2"]


def test_mixed_rules_tell_requests_apart_by_host_path_api_and_model() -> None:
    selection = RuleSelection(
        (
            Rule(match=RuleMatch(host="api.openai.com"), chaos=ERROR),
            Rule(name="mini", match=RuleMatch(model="gpt-4o-mini"), chaos=ERROR),
            Rule(name="anthropic", match=RuleMatch(provider="anthropic"), chaos=ERROR),
        )
    )
    for _ in range(2):
        assert names(selection, openai(model="gpt-4o")) == ["rule 1"]
        assert names(selection, openai(model="gpt-4o-mini")) == ["rule 1", "mini"]
        assert names(selection, Request()) == ["anthropic"]
        assert names(selection, SETTINGS) == []
