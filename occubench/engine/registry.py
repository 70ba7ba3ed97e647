"""Suites, executors and agents by name: the ``occubench.suites`` and ``occubench.executors`` entry points,
``package.module:attribute`` and ``path/to/file.py:attribute`` specs.

An agent is anything with ``run(task, env, trajectory)`` (:class:`occubench.core.agent.Agent`); ``--agent
package.module:attribute`` names one, or a factory that takes an :class:`AgentContext` and returns one. A suite is
a :class:`occubench.core.suite.SuiteDefinition`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from occubench.config import EXECUTORS, SUITES
from occubench.core.suite import SuiteDefinition
from occubench.errors import ConfigError

if TYPE_CHECKING:
    from occubench.config import RunConfig
    from occubench.core.agent import Agent
    from occubench.llm import Model


def _load(spec: str, what: str) -> Any:
    """What ``spec`` names: ``package.module:attribute`` (the current folder is on the import path, as for
    ``python -m``), or ``path/to/file.py:attribute`` (its folder too, so it can import its neighbours)."""
    source, _, attribute = spec.rpartition(":") if spec.partition(":")[0].endswith(".py") else spec.partition(":")
    try:
        value: Any = _module_of_file(Path(source)) if source.endswith(".py") else _module(source)
        for part in attribute.split("."):
            value = getattr(value, part)
    except ImportError as exc:
        raise ConfigError(f"{what} {spec!r}: cannot import {source!r} ({exc})") from None
    except SyntaxError as exc:
        raise ConfigError(f"{what} {spec!r}: {exc.filename}:{exc.lineno}: {exc.msg}") from None
    except AttributeError:
        raise ConfigError(f"{what} {spec!r}: {source} has no attribute {attribute!r}") from None
    return value


def _module(name: str) -> Any:
    if os.getcwd() not in sys.path:  # a console script's path lacks the folder it was started in
        sys.path.append(os.getcwd())
    return importlib.import_module(name)


def _module_of_file(path: Path) -> Any:
    if not path.is_file():
        raise ImportError(f"no file {path}")
    path = path.resolve()
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    name = f"occubench_user_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    if name not in sys.modules:
        found = importlib.util.spec_from_file_location(name, path)
        if found is None or found.loader is None:
            raise ImportError(f"{path} is not a Python file")
        module = importlib.util.module_from_spec(found)
        sys.modules[name] = module
        try:
            found.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def installed_suites() -> dict[str, SuiteDefinition]:
    """Every suite registered under the ``occubench.suites`` entry-point group, by name."""
    found = {}
    for point in entry_points(group=SUITES):
        definition = point.load()
        if not isinstance(definition, SuiteDefinition) or definition.name != point.name:
            raise ConfigError(f"entry point {point.name} = {point.value} in {SUITES} must be a SuiteDefinition "
                              f"named {point.name!r}")
        found[point.name] = definition
    if not found:
        raise ConfigError(f"no suite is registered under the entry-point group {SUITES}: install occubench "
                          "(pip install -e .) rather than running it from a source folder")
    return found


def load_suite(name: str) -> SuiteDefinition:
    """A registered suite by name, or ``package.module:attribute`` naming a :class:`SuiteDefinition`."""
    if ":" in name:
        definition = _load(name, "--suite")
        if not isinstance(definition, SuiteDefinition):
            raise ConfigError(f"--suite {name!r} is a {type(definition).__name__}, not a SuiteDefinition")
        return definition
    suites = installed_suites()
    if name not in suites:
        raise ConfigError(f"--suite: unknown suite {name!r}; installed: {', '.join(sorted(suites))} "
                          "(or give package.module:attribute)")
    return suites[name]


def load_executor(name: str) -> type[Any]:
    """The class registered as ``name`` under ``occubench.executors`` (an :class:`occubench.engine.executor.Executor`,
    not imported here: its module depends on this one); one whose module needs a package not installed is named with
    the extra of its distribution that provides it, when there is one. ``package.module:Class`` names one that is not
    registered."""
    if ":" in name:
        named = _load(name, "--executor")
        if not isinstance(named, type):
            raise ConfigError(f"--executor {name!r} is a {type(named).__name__}, not a class")
        return named
    found = {point.name: point for point in entry_points(group=EXECUTORS)}
    if name not in found:
        raise ConfigError(f"--executor: unknown executor {name!r}; installed: {', '.join(sorted(found)) or 'none'}")
    point = found[name]
    try:
        executor: type[Any] = point.load()
    except ImportError as exc:
        dist, hint = point.dist, ""
        if dist is not None and name in (dist.metadata.get_all("Provides-Extra") or []):
            hint = f": pip install '{dist.name}[{name}]'"
        raise ConfigError(f"--executor {name} needs {exc.name or 'a module not installed'} ({point.value}: {exc})"
                          f"{hint}") from None
    return executor


@dataclass(frozen=True)
class AgentContext:
    """What a user's agent factory gets: the run's settings and, with ``--agent-model``, the model to use."""

    config: RunConfig
    model: Model | None
    date: str


def load_agent(spec: str, context: AgentContext) -> Agent:
    value = _load(spec, "--agent")
    agent: Any = value if hasattr(value, "run") and not isinstance(value, type) else None
    if agent is None and callable(value):
        agent = value(context) if _takes_an_argument(value) else value()
    if not callable(getattr(agent, "run", None)):
        raise ConfigError(f"--agent {spec!r} must name an object with run(task, env, trajectory), or a factory "
                          "taking an AgentContext that returns one")
    return cast("Agent", agent)


def _takes_an_argument(factory: Callable[..., Any]) -> bool:
    """Whether ``factory`` (a class, a function) can be given the AgentContext, or is called with nothing."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): give it the context
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters)
