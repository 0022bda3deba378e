"""The fast tier (`make test-fast`) is what runs on a fresh clone, and every test in it runs there: a test
that skips in it fails (issue 39), so that a test whose prerequisite is missing cannot leave the tier
unnoticed. Run on a test file of its own by the suite's conftest, in this process (`pytester`)."""

import pytest

SKIPPING = """
import pytest


def test_that_skips():
    pytest.skip("nothing to run it on")


def test_that_runs():
    pass
"""


@pytest.mark.parametrize(
    ("tier", "outcomes"), [("fast", {"failed": 1, "passed": 1}), ("full", {"skipped": 1, "passed": 1})]
)
def test_a_test_that_skips_fails_in_the_fast_tier_only(pytester, tier, outcomes):
    pytester.makepyfile(test_skipping=SKIPPING)
    plugins = ("-p", "conftest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:xdist")
    result = pytester.runpytest_inprocess(*plugins, f"--tier={tier}")
    result.assert_outcomes(**outcomes)
    if tier == "fast":
        result.stdout.fnmatch_lines(
            ["*test_that_skips skipped in the fast tier, where every test runs*nothing to run it on*"]
        )
