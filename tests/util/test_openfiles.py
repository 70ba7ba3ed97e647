"""The open-files limit: raised to the hard limit when a run needs more than the soft one, an error naming the
flags when even the hard limit is lower."""

from __future__ import annotations

import resource
from collections.abc import Iterator

import pytest

from occubench.errors import ConfigError
from occubench.util.openfiles import RESERVE, ensure_open_files, raise_open_files


@pytest.fixture
def low_soft_limit() -> Iterator[int]:
    """This process's soft limit lowered to 300 for the test, then put back; the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2000:
        pytest.skip(f"the hard limit on open files here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (300, hard))
    try:
        yield hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_soft_limit_below_what_is_needed_is_raised_to_the_hard_one(low_soft_limit: int) -> None:
    ensure_open_files(1000, "--max-concurrency 1000")
    unlimited = low_soft_limit == resource.RLIM_INFINITY  # then raised to what is needed, as macOS takes no more
    expected = 1000 + RESERVE if unlimited else low_soft_limit
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == (expected, low_soft_limit)


def test_a_soft_limit_that_suffices_is_left_alone(low_soft_limit: int) -> None:
    ensure_open_files(300 - RESERVE, "--max-concurrency 44")
    assert raise_open_files(200) == 200
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 300


def test_more_than_the_hard_limit_allows_is_an_error_naming_the_flags() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no hard limit on open files here")
    with pytest.raises(ConfigError) as info:
        ensure_open_files(hard, "--max-connections 99 on 3 endpoint(s)")
    assert str(info.value).startswith("--max-connections 99 on 3 endpoint(s): ")
    assert f"at most {hard:,} (its hard limit, `ulimit -Hn`)" in str(info.value)
