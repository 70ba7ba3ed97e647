"""A suite's own settings: given like any other, kept for the suite, declared and checked by its plugin."""

from __future__ import annotations

from pathlib import Path

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


def test_a_suite_reads_its_own_options_of_a_config_holding_others() -> None:
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


#: (suite, flags of a setting it does not implement, the flag the refusal names)
UNREAD = [("occubench", ["--guidance", "2"], "--guidance"), ("executable", ["--npc-model", "m"], "--npc-model"),
          ("executable", ["--days", "3"], "--days"), ("workplace", ["--verifier-model", "v"], "--verifier-model"),
          ("workplace", ["--mentor-feedback"], "--mentor-feedback"),
          ("workplace", ["--world-params", '{"top_p": 1}'], "--world-params"),
          ("awm", ["--reflection-model", "r"], "--reflection-model"), ("occubench", ["--learning"], "--learning"),
          ("traineebench", ["--world-model", "w"], "--world-model"),
          ("traineebench", ["--workplace-dir", "d"], "--workplace-dir")]


@pytest.mark.parametrize(("suite", "flags", "named"), UNREAD)
def test_a_setting_the_suite_does_not_implement_is_refused_before_anything_is_written(
        suite: str, flags: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from occubench.cli import main
    code = main(["run", "--suite", suite, "--agent", "reference", "--output-dir", str(tmp_path / "out"), *flags])
    err = capsys.readouterr().err
    assert code == 2 and f"{named} is not an option of --suite {suite}" in err
    assert not (tmp_path / "out").exists()


def test_every_built_in_suite_says_what_it_reads() -> None:
    for name in ("occubench", "executable", "awm", "twin", "workplace", "traineebench"):
        definition = load_suite(name)
        assert definition.reads is not None and definition.options, name
    # Guidance and the colleagues' and reflection's models are implemented by the two libraries of working days.
    assert {name for name in ("occubench", "executable", "awm", "twin", "workplace", "traineebench")
            if "guidance" in (load_suite(name).reads or ())} == {"workplace", "traineebench"}
