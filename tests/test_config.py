"""RunConfig: typed settings from flags, a TOML file or Python; bad values named; secrets never serialised."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.config import Endpoint, RunConfig
from occubench.errors import ConfigError


def test_file_values_are_typed_and_flags_win(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('suite = "executable"\nmax-steps = 7\ntask_ids = [11, "24,25"]\nagent_params = {top_p = 0.5}\n')
    config = RunConfig.from_file(path, max_steps=9)
    assert (config.suite, config.max_steps, config.task_ids) == ("executable", 9, ["11", "24", "25"])
    assert config.agent_params == {"top_p": 0.5}


@pytest.mark.parametrize(("values", "message"), [
    ({"retry_budget": float("nan")}, "--retry-budget: Input should be a finite number"),
    ({"request_timeout": -5.0}, "--request-timeout: Input should be greater than 0"),
    ({"max_steps": 1.0}, "--max-steps: Input should be a valid integer"),
    ({"env_mode": "E9"}, "--env-mode"),
    ({"agent": "gpt"}, "module:Callable"),
    ({"run_name": "../x"}, "--run-name: must be a plain directory name"),
    ({"date": "tomorrow"}, "YYYY-MM-DD"),
    ({"colour": "blue"}, "--colour: Extra inputs are not permitted (unknown setting)"),
])
def test_bad_values_are_named(values: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RunConfig.create(values)


def test_bad_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "run.toml"
    path.write_text('max_steps = "five"\n')
    with pytest.raises(ConfigError, match=rf"{path}: max_steps: Input should be a valid integer"):
        RunConfig.from_file(path)
    path.write_text("max_steps = \n")
    with pytest.raises(ConfigError, match=rf"{path}: invalid TOML"):
        RunConfig.from_file(path)


def test_secrets_never_serialised(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-placeholder-not-a-real-key"
    config = RunConfig(api_key=secret, base_url="http://user:pw@host/v1?api_key=abc")
    assert secret not in repr(config) and secret not in str(config.record())
    assert config.record()["api_key"] == "<redacted>" and "pw" not in config.record()["base_url"]
    assert config.endpoint("agent").api_key == secret and secret in config.secrets()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    assert RunConfig().endpoint("world").api_key == "sk-from-the-environment"


def test_the_agent_reflects_on_its_own_endpoint_unless_another_model_is_named() -> None:
    shared, own = "http://shared.test/v1", "http://agent.test/v1"
    config = RunConfig(base_url=shared, agent_base_url=own, agent_api_key="sk-agent-placeholder")
    assert config.endpoint("reflection") == config.endpoint("agent") == Endpoint(own, "sk-agent-placeholder")
    critic = RunConfig(base_url=shared, agent_base_url=own, reflection_model="critic")
    assert critic.endpoint("reflection").base_url == shared
    flagged = RunConfig(base_url=shared, agent_base_url=own, reflection_base_url="http://critic.test/v1")
    assert flagged.endpoint("reflection").base_url == "http://critic.test/v1"


@pytest.mark.parametrize("url", ["localhost:8000/v1", "127.0.0.1:8100/v1", "ftp://host/v1", "http://", "/v1"])
def test_a_base_url_without_scheme_or_host_is_refused_naming_where_it_came_from(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sent as given, such a URL was retried as a dead endpoint for the whole retry budget.
    with pytest.raises(ConfigError, match="^--world-base-url: expected an http:// or https:// URL"):
        RunConfig.create({"world_base_url": url})
    config_file = tmp_path / "run.toml"
    config_file.write_text(f'base_url = "{url}"\n')
    with pytest.raises(ConfigError, match=f"^{config_file}: base_url: expected an http"):
        RunConfig.from_file(config_file)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ConfigError, match="^OPENAI_BASE_URL: expected an http"):
        RunConfig().endpoint("agent")
    assert RunConfig.create({"base_url": "http://127.0.0.1:8100/v1"}).endpoint("agent").base_url == \
        "http://127.0.0.1:8100/v1"
