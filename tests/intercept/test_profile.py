"""Profiles are checked when read: a partial quota or a field that does nothing alone is an error naming it."""

import json
from pathlib import Path

import pytest

from llmproxy.errors import ChaosError, UsageError
from llmproxy.intercept.profile import ChaosProfile, merge_patch
from llmproxy.intercept.rules import load_chaos, parse_profile, shorthand_rules


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"quotaLimit": 5}, "quotaLimit and quotaWindowMillis"),
        ({"tokenQuotaLimit": 5}, "tokenQuotaWindowMillis"),
        ({"tokenQuotaWindowMillis": 60000}, "a token limit"),
        ({"errorProbability": 0.5}, "errorProbability needs an errorStatus"),
        ({"modelFaultProbability": 0.5}, "needs a modelFault"),
        ({"slowResponseChunkSize": 10}, "slowResponseChunkDelayMs"),
        ({"retryAfter": "soon"}, "neither seconds nor an HTTP date"),
        ({"errorStatus": 200}, "greater than or equal to 400"),
        ({"errorProbabilty": 0.5}, "Extra inputs are not permitted"),
    ],
)
def test_a_profile_that_cannot_work_is_refused_saying_why(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ChaosError, match=problem):
        parse_profile(fields, "$.chaos")


def test_truncation_reads_mockservers_fields() -> None:
    assert ChaosProfile(truncateMode="MID_STREAM").truncation == 0.5
    assert ChaosProfile(truncateAtFraction=0.25).truncation == 0.25
    assert ChaosProfile(truncateMode="NONE", truncateAtFraction=0.25).truncation is None
    assert ChaosProfile(truncateAfterEvents=3, truncateAtFraction=0.25).truncation == 3


def test_merge_patch_follows_rfc_7396() -> None:
    assert merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"a": None, "b": {"c": 4}, "e": 5}) == {
        "b": {"c": 4, "d": 3},
        "e": 5,
    }
    assert merge_patch({"a": 1}, [1, 2]) == [1, 2]


def test_a_chaos_file_error_names_the_file_and_the_json_path(tmp_path: Path) -> None:
    path = tmp_path / "chaos.json"
    path.write_text(json.dumps({"rules": [{"chaos": {"errorStatus": 529}}, {"chaos": {"quotaLimit": 3}}]}))
    with pytest.raises(ChaosError) as raised:
        load_chaos(path)
    assert str(raised.value).startswith(f"{path}: $.rules[1].chaos: ")
    path.write_text("{not json")
    with pytest.raises(ChaosError, match="not JSON"):
        load_chaos(path)


def test_shorthands_build_one_rule_and_a_daily_one() -> None:
    rules = shorthand_rules(fail="529@0.3", fail_first=2, retry_after="0.2", rpm=50, tpm=40_000, tpd=1_000_000)
    first, daily = rules
    assert first.name == "--fail 529@0.3 --fail-first 2 --retry-after 0.2 --rpm 50 --tpm 40000"
    assert first.chaos.model_dump(exclude_defaults=True) == {
        "errorStatus": 529,
        "errorProbability": 0.3,
        "failRequestCount": 2,
        "retryAfter": "0.2",
        "quotaName": "cli",
        "quotaLimit": 50,
        "quotaWindowMillis": 60_000,
        "tokenQuotaLimit": 40_000,
        "tokenQuotaWindowMillis": 60_000,
    }
    assert daily.chaos.tokenQuotaWindowMillis == 86_400_000
    assert shorthand_rules(fail_first=2)[0].chaos.errorStatus == 529
    assert shorthand_rules() == ()


@pytest.mark.parametrize(
    ("fail", "problem"),
    [
        ("529@lots", "STATUS@PROBABILITY"),
        ("529@1.5", "less than or equal to 1"),
        ("99", "greater than or equal to 400"),
    ],
)
def test_a_bad_shorthand_is_a_one_line_usage_error(fail: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem) as raised:
        shorthand_rules(fail=fail)
    assert "\n" not in str(raised.value)


def test_a_bad_shorthand_names_the_option_as_given_not_the_profile_field() -> None:
    with pytest.raises(UsageError) as raised:
        shorthand_rules(fail="500", retry_after="soon")
    assert str(raised.value) == "--retry-after soon: 'soon' is neither seconds nor an HTTP date"
    with pytest.raises(UsageError) as raised:
        shorthand_rules(fail=["500@0.5", "529@1.5"])
    assert str(raised.value) == "--fail 529@1.5: Input should be less than or equal to 1"
