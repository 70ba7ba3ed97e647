"""A suite's own settings: given like any other, kept for the suite, declared and checked by its plugin."""

from __future__ import annotations

import pytest
from rich.console import Console

from occubench.config import RunConfig
from occubench.core.options import SuiteOptions
from occubench.engine.registry import load_suite
from occubench.errors import ConfigError


class Mine(SuiteOptions):
    days: int = 10
    folder: str | None = None


def test_the_built_in_suites_settings_are_kept_for_the_suite_under_their_flag_names() -> None:
    config = RunConfig.create({"suite": "workplace", "days": 3, "worlds_dir": "w", "suite_options": {"x": 1}})
    assert config.suite_options == {"x": 1, "days": 3, "worlds_dir": "w"}
    assert "days" not in RunConfig.model_fields
    # What args.json records comes back the same, as a rescore reads it.
    assert RunConfig.create(config.record()).suite_options == config.suite_options


def test_a_suite_reads_its_own_options_and_leaves_other_suites_alone() -> None:
    config = RunConfig.create({"days": 3, "scenario_pool": "elsewhere.jsonl", "suite_options": {"folder": "f"}})
    assert Mine.of(config) == Mine(days=3, folder="f")
    assert Mine.of(RunConfig()) == Mine()


@pytest.mark.parametrize("value", ["3", True, None, 2.5, [1]])
def test_a_bad_option_is_an_error_naming_its_flag(value: object) -> None:
    with pytest.raises(ConfigError, match="^--days: "):
        Mine.of(RunConfig.create({"days": value}))


def test_the_executable_suite_checks_its_worlds_folder_when_it_plans() -> None:
    config = RunConfig.create({"suite": "executable", "agent": "reference", "worlds_dir": 5})
    with pytest.raises(ConfigError, match="^--worlds-dir: "):
        load_suite("executable").plan(config, Console(quiet=True))
