"""The typed configuration of a run: built from command-line flags, from a TOML file, or in Python.

``RunConfig`` holds every setting of ``occubench run`` under the flag's name (``--max-steps`` is ``max_steps``).
Values are checked on construction, whatever their source, and a bad one is reported with the flag or the file
key that set it. API keys are :class:`pydantic.SecretStr`: they never appear in a ``repr``, in ``args.json`` or in
an error message.
"""

from __future__ import annotations

import datetime
import os
import shlex
import string
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from occubench.errors import ConfigError
from occubench.util.redact import MASK, environment_secrets, redact_url, url_secrets

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Roles a run can give a model to; each has its own endpoint flags.
ROLES = ("agent", "world", "verifier", "npc", "reflection")
#: Agents that need no code of the user's: the model under test, or a suite's scripted solutions.
BUILTIN_AGENTS = ("llm", "reference", "noop", "mcp")


def is_outside(spec: str) -> bool:
    """Whether ``--agent spec`` is an agent outside occubench that plays over MCP (``mcp``, ``command:...``)."""
    return spec == "mcp" or spec.startswith("command:")


#: What ``--agent command:...`` replaces in its arguments.
PLACEHOLDERS = ("mcp_url", "instruction_file", "task_id", "model")


def parse_command(command: str) -> list[str]:
    """The argument vector of a ``command:`` agent; a :class:`ConfigError` for an empty or unparsable one, or a
    placeholder other than :data:`PLACEHOLDERS`."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"--agent command: cannot split {command!r}: {exc}") from None
    if not argv:
        raise ConfigError("--agent command: no program given; e.g. command:'python agent.py {mcp_url} "
                          "{instruction_file}'")
    for part in argv:
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(part) if name is not None}
        except ValueError as exc:
            raise ConfigError(f"--agent command: {part!r}: {exc} (write {{{{ and }}}} for braces)") from None
        if unknown := names - set(PLACEHOLDERS):
            raise ConfigError(f"--agent command: unknown placeholder {{{sorted(unknown)[0]}}} in {part!r}; known: "
                              + ", ".join(f"{{{name}}}" for name in PLACEHOLDERS))
    return argv


@dataclass(frozen=True)
class FaultLevel:
    """One fault level (``--env-mode``): what a faulted call turns into. A level of several kinds mixes them."""

    name: str
    #: "explicit" (an error instead of the answer) and/or "implicit" (a silently worse answer); none for E0.
    kinds: tuple[str, ...]
    description: str
    #: Whether the robustness score R (the OccuBench paper's: worst of E1–E3 over E0) takes this level in.
    in_robustness: bool = True


#: Every fault level, in order: the one table config, the command line, the injector, prompt-mode rules and the
#: reports read. A new level is one entry here.
FAULT_LEVELS: dict[str, FaultLevel] = {level.name: level for level in (
    FaultLevel("E0", (), "clean", in_robustness=False),
    FaultLevel("E1", ("explicit",), "explicit errors"),
    FaultLevel("E2", ("implicit",), "silent degradation"),
    FaultLevel("E3", ("explicit", "implicit"), "both, mixed"),
)}
#: The level without faults: the baseline of robustness and of agent profiles.
CLEAN_LEVEL = "E0"
#: How faults are made: the simulator is told to misbehave, or a wrapper injects them.
INJECTIONS = ("prompt", "harness")


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    api_key: str | None


@dataclass(frozen=True)
class ModelRole:
    """One role's model as one typed value, the same for every role of a run or a synthesis: the model, the endpoint
    serving it with the key to send, and its request parameters (sampling, output cap)."""

    role: str
    model: str | None
    endpoint: Endpoint
    params: dict[str, Any]


_S = TypeVar("_S", bound="Settings")


_M = TypeVar("_M", bound=BaseModel)
#: The entry-point group executors are registered under (:func:`occubench.engine.registry.load_executor`).
EXECUTORS = "occubench.executors"
#: The entry-point group suites are registered under (:func:`occubench.engine.registry.installed_suites`).
SUITES = "occubench.suites"


def registered(group: str) -> list[str]:
    """The names registered under an entry-point ``group`` (:data:`EXECUTORS`, :data:`SUITES`), none loaded."""
    return sorted(point.name for point in entry_points(group=group))


def validated(cls: type[_M], values: Mapping[str, Any], source: str | None = None) -> _M:
    """``cls`` made of ``values``; a bad value raises :class:`ConfigError` naming its key and ``source`` (a file
    name; without one, keys are named as command-line flags)."""
    try:
        return cls(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else ""
            where = f"{source}: {name}" if source else f"--{name.replace('_', '-')}"
            message = error["msg"].removeprefix("Value error, ")
            # A rule over several settings (a model validator) names its flags itself.
            problems.append((f"{where}: " if name else f"{source}: " if source else "") + message +
                            (" (unknown setting)" if error["type"] == "extra_forbidden" else ""))
        raise ConfigError("; ".join(problems)) from None


def check_base_url(url: str) -> None:
    """A ValueError unless ``url`` is an http(s) URL with a host: ``localhost:8000/v1`` would be sent nowhere."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"expected an http:// or https:// URL such as http://localhost:8000/v1, got "
                         f"{redact_url(url)!r}")


class Settings(BaseModel):
    """Typed settings whose models each have a role: ``<role>_api_key`` and ``<role>_base_url`` fields, falling back
    to ``api_key`` and ``base_url``. A run and each synthesis track are one."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)
    #: The roles whose endpoint fields the settings have.
    roles: ClassVar[tuple[str, ...]] = ()
    api_key: SecretStr | None = None
    base_url: str | None = None
    # How the models are called, and what is kept.
    #: Episodes in flight at once (``--max-concurrency``; ``max_workers``, its former name, still read).
    max_concurrency: int = Field(32, ge=1, validation_alias=AliasChoices("max_concurrency", "max_workers"))
    request_timeout: float = Field(300.0, gt=0)
    retry_budget: float = Field(600.0, gt=0)
    #: Requests in flight per endpoint at most; by default 32, and never fewer than ``max_concurrency``.
    max_connections: int | None = Field(None, ge=1)
    fixed_concurrency: bool = False
    cache: str | None = None
    replay: bool = False
    prices: str | None = None
    skip_preflight: bool = False
    debug: bool = False

    @field_validator("*")
    @classmethod
    def _url(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and (info.field_name or "").endswith("base_url"):
            check_base_url(value)
        return value

    # -- construction ----------------------------------------------------------------------------------------

    @classmethod
    def create(cls: type[_S], values: Mapping[str, Any], *, source: str | None = None) -> _S:
        """A config from ``values``; a bad value raises :class:`ConfigError` naming its key and ``source`` (a file
        name; without one, keys are named as command-line flags)."""
        return validated(cls, values, source)

    @classmethod
    def from_file(cls: type[_S], path: str | Path, **overrides: Any) -> _S:
        """A config from a TOML file (keys as the fields); ``overrides`` win over the file."""
        return cls.create({**read_config_file(Path(path)), **overrides}, source=str(path))

    # -- use -------------------------------------------------------------------------------------------------

    def endpoint(self, role: str) -> Endpoint:
        """The role's own flag, then the shared flag, then the OpenAI environment variables."""
        key: SecretStr | None = getattr(self, f"{role}_api_key") or self.api_key
        url = getattr(self, f"{role}_base_url") or self.base_url
        if not url and (url := os.environ.get("OPENAI_BASE_URL")):
            try:
                check_base_url(url)
            except ValueError as exc:
                raise ConfigError(f"OPENAI_BASE_URL: {exc}") from None
        return Endpoint(base_url=url or None,
                        api_key=(key.get_secret_value() if key else None) or os.environ.get("OPENAI_API_KEY") or None)

    def role_params(self, role: str) -> dict[str, Any]:
        """The request parameters of ``role``'s model: its ``<role>_params``."""
        return dict(getattr(self, f"{role}_params", None) or {})

    def model_role(self, role: str, model: str | None = None) -> ModelRole:
        """``role``'s model settings; ``model`` names another model than its ``<role>_model`` for the role."""
        name = model if model is not None else getattr(self, f"{role}_model", None)
        return ModelRole(role, name if isinstance(name, str) else None, self.endpoint(role), self.role_params(role))

    def secrets(self) -> list[str]:
        """Every key this run may send, credentials written into its URLs and every credential of the environment
        (which an agent program inherits), for redaction."""
        endpoints = [self.endpoint(role) for role in self.roles]
        values = [endpoint.api_key for endpoint in endpoints]
        values += [s.get_secret_value() for name in type(self).model_fields
                   if isinstance(s := getattr(self, name), SecretStr)]
        values += [secret for endpoint in endpoints for secret in url_secrets(endpoint.base_url)]
        return [value for value in values if value] + environment_secrets()

    def record(self) -> dict[str, Any]:
        """The settings as ``args.json`` keeps them: keys masked, credentials in URLs masked."""
        settings = self.model_dump(mode="json")
        for name, value in settings.items():
            if isinstance(getattr(self, name), SecretStr):
                settings[name] = MASK
            elif name.endswith("base_url"):
                settings[name] = redact_url(value)
        return settings


def with_roles(base: type[_S], roles: tuple[str, ...]) -> type[_S]:
    """``base`` with the endpoint and request parameters of each of ``roles``: ``<role>_api_key`` and
    ``<role>_base_url`` (falling back to ``api_key`` and ``base_url``), and ``<role>_params``. Declared once here
    rather than by hand in every settings class that has the role."""
    fields: dict[str, Any] = {}
    for role in roles:
        fields[f"{role}_api_key"] = (SecretStr | None, None)
        fields[f"{role}_base_url"] = (str | None, None)
        fields[f"{role}_params"] = (dict[str, Any], Field(default_factory=dict))
    made: type[_S] = create_model(f"{base.__name__}Roles", __base__=base, **fields)
    return made


def _split_list(value: Any) -> Any:
    # Flags take "11 24", "11,24" or both; a file may hold numbers or one comma-separated string.
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        return [part.strip() for v in value for part in str(v).split(",") if part.strip()]
    return value


if TYPE_CHECKING:
    _RunRoles = Settings
else:
    _RunRoles = with_roles(Settings, ROLES)


#: The built-in suites' own settings (the benchmark's data, the executable worlds' folder, the workplace's days),
#: accepted under their flag names like any other setting and kept in ``suite_options`` for the suite to check.
SUITE_SETTINGS = ("data_dir", "eval_data", "scenario_pool", "config_dir", "download", "worlds_dir",
                  "trust_world_code", "days", "workplace_dir", "learning", "twin_of", "traineebench_config",
                  "reference_dir", "mentor_feedback", "paper_day_two", "self_evolution")

_OUTPUT_CAPS = {"world": {"max_tokens": 4096}, "verifier": {"max_tokens": 2048}, "npc": {"max_tokens": 512}}


class RunConfig(_RunRoles):
    """Everything ``occubench.run`` needs; defaults are the command line's. Each role of :data:`ROLES` also has
    ``<role>_api_key``, ``<role>_base_url`` and ``<role>_params`` (:func:`with_roles`)."""

    roles: ClassVar[tuple[str, ...]] = ROLES

    # What to evaluate, and with which models.
    suite: str = "occubench"
    agent: str = "llm"
    agent_model: str | None = None
    world_model: str | None = None
    verifier_model: str | None = None
    npc_model: str | None = None
    #: Workplace ``--learning``: the model that reflects on day one (default: the agent's, on its endpoint).
    reflection_model: str | None = None
    # Faults: the level (``env_mode``, the OccuBench README's name) and the injection (``fault_mode``).
    env_mode: str = "E0"
    fault_count: int = Field(2, ge=0)
    fault_duration: int = Field(2, ge=1)
    fault_mode: str | None = None
    seed: int = 0
    #: A world package whose worlds the suite runs (``oci://HOST/NAME:VERSION``, ``git+URL@VERSION``,
    #: ``hf://OWNER/NAME@VERSION``, or ``@sha256:...`` for a digest; :mod:`occubench.hub`).
    worlds: str | None = None
    #: The package digest ``worlds`` resolved to (set when the run resolves it; given, it must match).
    worlds_digest: str | None = Field(None, pattern=r"^sha256:[0-9a-f]{64}$")
    # Task selection.
    task_ids: list[str] | None = None
    categories: list[str] | None = None
    difficulty: list[int] | None = None
    #: Shuffle the selected tasks with ``seed`` (before ``limit``).
    shuffle: bool = False
    limit: int | None = Field(None, ge=1)
    # The agent.
    with_plan: bool = False
    max_steps: int = Field(50, ge=1)
    #: The agent sees only its last K turns (train and evaluate with the same window).
    history_window: int | None = Field(None, ge=1)
    #: The agent's model takes image input: an image a tool returns reaches it as image content, not as its text
    #: (:mod:`occubench.core.images`). The built-in agent and outside agents over MCP.
    agent_images: bool = False
    date: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    reasoning_effort: str | None = None
    #: Keep each agent turn's token ids and logprobs as the endpoint returns them (for RL): the agent's requests ask
    #: for ``logprobs`` and vLLM's ``return_token_ids`` (dropped by itself where an endpoint refuses it).
    record_tokens: bool = False
    #: The kind of server the agent's endpoint is ("auto": found out from it; see :mod:`occubench.llm.servers`):
    #: its profile sets what the run leaves unset (workers from its slots, the agent's output cap, the context).
    server: Literal["auto", "llama.cpp", "vllm", "ollama", "openai", "generic"] = "auto"
    #: The context of the judge's and the world model's model, in tokens: longer prompts are trimmed in the middle.
    context_window: int | None = Field(None, ge=1024)
    trials: int = Field(1, ge=1)
    num_votes: int = Field(3, ge=1)
    # Limits: an episode that reaches one stops and is judged on what it did; a run stops starting tasks once
    # its cost (with ``prices``) reaches ``max_cost``.
    max_tokens_per_task: int | None = Field(None, ge=1)
    max_seconds_per_task: float | None = Field(None, gt=0)
    max_cost: float | None = Field(None, ge=0)
    #: Hint tiers each day's task shows: 0 none, 1 where to look, 2 also whom to ask and what for, 3 also the plan
    #: (never a checkpoint's value). Every run's setting: results carry it, reports compare runs by it.
    guidance: int = Field(0, ge=0, le=3)
    #: A person watching in ``occubench view`` may send the agent hints of a tier, recorded in the results and kept
    #: apart in every table; the run keeps what the viewer needs, its token too, in ``RUN_DIR/live/`` (core.hints).
    live_hints: bool = False
    #: Traces and metrics of every episode (:mod:`occubench.telemetry`); on too with OTEL_EXPORTER_OTLP_ENDPOINT.
    otel: bool = False
    #: Settings only the suite reads, declared and checked by its plugin (``core.options.SuiteOptions``); the
    #: built-in suites' are given under their own names (:data:`SUITE_SETTINGS`).
    suite_options: dict[str, Any] = Field(default_factory=dict)
    #: A run directory whose saved episodes are judged again instead of running the agent (``occubench rescore``).
    rescore: str | None = None
    # The run.
    output_dir: str = "./results"
    run_name: str | None = None
    force: bool = False
    #: Where episodes run: an executor registered under :data:`EXECUTORS`, "local" (this process's threads) and "ray"
    #: (a Ray cluster) built in, or ``package.module:Class`` (not part of the config hash).
    executor: str = "local"
    #: The Ray cluster to join (``ray.init(address=...)``); None starts a local Ray instance for the run.
    ray_address: str | None = None
    #: Ray worker processes, each running its share of ``max_concurrency`` episodes at once; default: the cluster's
    #: CPUs.
    ray_workers: int | None = Field(None, ge=1)
    # Agents outside occubench (``agent = "mcp"`` or ``"command:..."``): where their episodes are served over MCP
    # (none of it is part of the config hash). The port: 8200 for ``mcp`` (what `occubench serve` prints), any
    # free one for a command, which is given its URL.
    serve_host: str = "127.0.0.1"
    serve_port: int | None = Field(None, ge=0, le=65535)
    #: A file holding the bearer token (default: ``$OCCUBENCH_SERVE_TOKEN``): every request must carry it off
    #: loopback, where it is required; on loopback it guards the episode listing, each episode's URL being its own
    #: credential. The token itself is never a setting, so never on disk.
    serve_token_file: str | None = None
    #: Other names clients reach a host other than loopback by, accepted in the Host header.
    serve_allowed_hosts: list[str] = Field(default_factory=list)
    #: ``mcp``: an episode whose client has sent nothing for this long is taken as abandoned (an agent error).
    serve_idle_timeout: float | None = Field(900.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _suite_settings(cls, values: Any) -> Any:
        if isinstance(values, dict) and (given := {k: values[k] for k in SUITE_SETTINGS if k in values}):
            options = values.get("suite_options", {})
            values = {k: v for k, v in values.items() if k not in given}
            values["suite_options"] = {**options, **given} if isinstance(options, dict) else options
        return values

    @field_validator("env_mode")
    @classmethod
    def _fault_level(cls, value: str) -> str:
        if value not in FAULT_LEVELS:
            raise ValueError(f"{value!r} is not a fault level; choose from {', '.join(FAULT_LEVELS)}")
        return value

    @field_validator("fault_mode")
    @classmethod
    def _injection(cls, value: str | None) -> str | None:
        if value is not None and value not in INJECTIONS:
            raise ValueError(f"{value!r} is not an injection; choose from {', '.join(INJECTIONS)}")
        return value

    @field_validator("task_ids", "categories", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return _split_list(value)

    @field_validator("difficulty", mode="before")
    @classmethod
    def _levels(cls, value: Any) -> Any:
        value = _split_list(value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            try:
                return [int(v) for v in value]
            except ValueError:
                raise ValueError(f"expected difficulty levels as whole numbers, got {', '.join(value)}") from None
        return value

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return datetime.date.fromisoformat(value).isoformat()
        except ValueError:
            raise ValueError(f"expected a date as YYYY-MM-DD, got {value!r}") from None

    @field_validator("agent")
    @classmethod
    def _agent(cls, value: str) -> str:
        if value.startswith("command:"):
            try:
                parse_command(value.removeprefix("command:"))
            except ConfigError as exc:  # pydantic reports a ValueError, naming the setting
                raise ValueError(str(exc).removeprefix("--agent command: ")) from None
        elif value not in BUILTIN_AGENTS and ":" not in value:
            raise ValueError("expected llm, reference, noop, mcp (outside agents over MCP), command:'PROGRAM "
                             "{mcp_url} ...' (a program per episode) or module:Callable (your own agent), "
                             f"got {value!r}")
        return value

    @field_validator("executor")
    @classmethod
    def _executor(cls, value: str) -> str:
        # ``package.module:Class`` names one as for --agent and --suite: loaded, and checked, when the run starts.
        if ":" not in value and value not in (known := registered(EXECUTORS)):
            raise ValueError(f"unknown executor {value!r}; installed: "
                             f"{', '.join(known) or 'none (install occubench: pip install -e .)'}")
        return value

    @field_validator("run_name")
    @classmethod
    def _run_name(cls, value: str | None) -> str | None:
        if value is not None and (Path(value).name != value or value in ("", ".", "..")):
            raise ValueError(f"must be a plain directory name, got {value!r}")
        return value

    def role_params(self, role: str) -> dict[str, Any]:
        # Every role but the agent under test gets an output cap by default: a judge or a colleague that rambles for
        # thousands of tokens costs minutes on a one-slot server (override with --<role>-params '{"max_tokens": N}').
        own = super().role_params(role)
        if role == "agent":
            named = {"temperature": self.temperature, "max_tokens": self.max_tokens,
                     "reasoning_effort": self.reasoning_effort}
            tokens = {"logprobs": True, "return_token_ids": True} if self.record_tokens else {}
            return {**{k: v for k, v in named.items() if v is not None}, **tokens, **own}
        if role == "reflection":  # the agent's own model reflects with the agent's settings; another with defaults
            return {"max_tokens": 2048, **(self.role_params("agent") if self.reflection_model is None else {}), **own}
        return {**_OUTPUT_CAPS.get(role, {}), **own}

    def endpoint(self, role: str) -> Endpoint:
        # Without --reflection-model the agent reflects on its day itself: its model, so its endpoint.
        if role == "reflection" and self.reflection_model is None:
            own = super().endpoint("reflection")
            agent = super().endpoint("agent")
            given = self.model_dump(include={"reflection_base_url", "reflection_api_key"})  # fields of with_roles
            return Endpoint(own.base_url if given["reflection_base_url"] else agent.base_url,
                            own.api_key if given["reflection_api_key"] else agent.api_key)
        return super().endpoint(role)



def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a TOML file; keys may be written with dashes, as the flags are."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"--config: file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--config: cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return {key.replace("-", "_"): value for key, value in data.items()}
