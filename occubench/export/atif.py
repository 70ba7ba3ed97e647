"""Episodes as ATIF trajectories (the Agent Trajectory Interchange Format of the Harbor project, whose pydantic
models in ``harbor.models.trajectories`` are its schema), and ATIF trajectories read back as results.

One episode is one trajectory: a ``system`` step (the agent's system prompt) and a ``user`` step (the task's
instruction) as the run's ``context.jsonl`` kept them, then an ``agent`` step per turn of the agent — its text, its
tool calls (``tool_call_id`` ``call_<step>_<n>``; ``extra.call_index``, the call's index among those that reached
the environment) and what each returned (``observation``: the JSON text of the tool's answer), and with
``--record-tokens`` the turn's prompt and completion token ids and logprobs (``metrics``; the sampling parameters
in ``metrics.extra.params``). A final answer no turn carries (a scripted agent's) is one more agent step, marked
``extra.final_answer``. ``final_metrics`` counts the agent's tokens and, given prices, its cost. ATIF has no field
for a reward: ``extra.reward`` is the verdict (1.0 passed, 0.0 failed, null for an episode that errored), and
``extra.occubench`` the rest of the result (feedback, checks, votes, usage by role, faults...), from which
:func:`from_atif` gives the result back. The agent's conversation is not repeated: the steps hold it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from occubench import __version__
from occubench.core.results import Result
from occubench.core.tools import json_arguments
from occubench.core.trajectory import Step, ToolCall, Trajectory
from occubench.engine.summary import Price
from occubench.errors import ConfigError
from occubench.llm.types import Tokens
from occubench.store import RESULTS_FILE, latest_by_task, read_context, run_records
from occubench.util.jsonl import dumps_line, json_digest, read_json
from occubench.util.jsonsafe import dumps, json_safe
from occubench.util.text import terminal

#: The newest ATIF version whose fields are all we write (trajectory_id, and extra on tool calls, came in v1.7).
SCHEMA_VERSION = "ATIF-v1.7"
NOTES = ("Written by occubench export. extra.reward is the verdict (1.0 passed, 0.0 failed, null: the episode "
         "errored); extra.occubench is the rest of the result.")
#: How an exported trajectory's file name ends.
SUFFIX = ".atif.json"
#: The context kinds that open a trajectory, and the source of their steps.
_OPENING = (("system_prompt", "system"), ("instruction", "user"))
#: Result fields the steps and the agent already hold, or that only mean something in their run directory.
_NOT_IN_EXTRA = ("steps", "messages", "trajectory", "context")


def to_atif(result: Result, context: Mapping[str, Any] | None = None, *, session_id: str | None = None,
            prices: Mapping[str, Price] | None = None) -> dict[str, Any]:
    """``result`` as one ATIF trajectory (see the module docstring), a JSON-safe dict. ``context`` holds the values
    the agent was shown by kind (``system_prompt``, ``instruction``, ``tools``), ``session_id`` names the run, and
    with ``prices`` the agent's cost is counted."""
    context = context or {}
    # A value of None is one missing from context.jsonl.
    steps: list[dict[str, Any]] = [{"source": source, "message": _text(context[kind])}
                                   for kind, source in _OPENING if context.get(kind) is not None]
    opening = len(steps)
    steps += [_agent_step(step, opening + number) for number, step in enumerate(result.steps, start=1)]
    last = result.steps[-1].content if result.steps else None
    if (last or "") != result.final_answer or not steps:
        steps.append({"source": "agent", "message": _text(result.final_answer), "extra": {"final_answer": True}})
    agent: dict[str, Any] = {"name": "occubench", "version": __version__}
    if isinstance(result.agent_model, str):
        agent["model_name"] = result.agent_model
    if isinstance(context.get("tools"), list):
        agent["tool_definitions"] = [tool for tool in context["tools"] if isinstance(tool, dict)]
    trajectory = {
        "schema_version": SCHEMA_VERSION, "session_id": session_id,
        "trajectory_id": f"{result.task_id}/trial-{result.trial}", "agent": agent,
        "steps": [{"step_id": number, **step} for number, step in enumerate(steps, start=1)], "notes": NOTES,
        "final_metrics": _final_metrics(result, len(steps), prices),
        "extra": {"reward": (1.0 if result.is_correct else 0.0) if result.ok else None,
                  "occubench": {k: v for k, v in result.to_dict().items() if k not in _NOT_IN_EXTRA}},
    }
    return json_safe({key: value for key, value in trajectory.items() if value is not None})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else dumps(value)


def _agent_step(step: Step, step_id: int) -> dict[str, Any]:
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for number, call in enumerate(step.tool_calls, start=1):
        call_id = f"call_{step_id}_{number}"
        text = _text(call.arguments)
        extra: dict[str, Any] = {"call_index": call.call_index if _is_int(call.call_index) else None}
        try:
            arguments = json_arguments(text)
        except ValueError:
            arguments = {}
        if json.dumps(arguments, ensure_ascii=False) != text:  # the text as the model wrote it, to be read back
            extra["arguments_text"] = text
        calls.append({"tool_call_id": call_id, "function_name": _text(call.name), "arguments": arguments,
                      "extra": extra})
        results.append({"source_call_id": call_id, "content": dumps(call.observation)})
    atif: dict[str, Any] = {"source": "agent", "message": _text(step.content or "")}
    if calls:
        atif.update(tool_calls=calls, observation={"results": results})
    if isinstance(step.tokens, dict):
        tokens = Tokens.read(step.tokens) or Tokens()  # ids and logprobs, each left out unless wholly valid
        metrics: dict[str, Any] = {}
        if tokens.prompt_ids is not None:
            metrics.update(prompt_tokens=len(tokens.prompt_ids), prompt_token_ids=list(tokens.prompt_ids))
        if tokens.completion_ids is not None:
            metrics.update(completion_tokens=len(tokens.completion_ids),
                           completion_token_ids=list(tokens.completion_ids))
        if tokens.logprobs is not None:
            metrics["logprobs"] = list(tokens.logprobs)
        if isinstance(step.tokens.get("params"), dict):
            metrics["extra"] = {"params": step.tokens["params"]}
        atif["metrics"] = metrics
    return atif


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _final_metrics(result: Result, steps: int, prices: Mapping[str, Price] | None) -> dict[str, Any]:
    metrics: dict[str, Any] = {"total_steps": steps}
    usage = result.usage.get("agent")
    if usage is None:  # a scripted agent
        return metrics
    metrics.update(total_prompt_tokens=usage.prompt_tokens, total_completion_tokens=usage.completion_tokens,
                   total_cached_tokens=usage.cached_tokens)
    price = (prices or {}).get(result.agent_model or "")
    try:
        cost = price.cost(usage) if price else None
    except OverflowError:  # token counts past what a float holds: a hand-made file
        cost = None
    if cost is not None and math.isfinite(cost):
        metrics["total_cost_usd"] = cost
    return metrics


def from_atif(trajectory: Any) -> Result:
    """A result from an ATIF trajectory: one :func:`to_atif` wrote gives back its result, steps included; any other
    gives its agent steps, its first system and user steps as the system prompt and instruction, its agent's model
    and tools, its id as the task id, and a pass when ``extra.reward`` is 1 or more. The context values are in the
    result's ``context_values``. A value that is not a trajectory (no steps) is a ``ValueError``."""
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("steps"), list):
        raise ValueError("not an ATIF trajectory (no list of steps)")
    extra, agent = _dict(trajectory.get("extra")), _dict(trajectory.get("agent"))
    steps = [step for step in trajectory["steps"] if isinstance(step, dict)]
    agent_steps = [step for step in steps if step.get("source") == "agent"]
    ours = isinstance(extra.get("occubench"), dict)
    if ours:
        result = Result.from_dict(extra["occubench"])
    else:
        name = trajectory.get("trajectory_id") or trajectory.get("session_id")
        reward: Any = extra.get("reward")
        result = Result(task_id=name if isinstance(name, str) else "trajectory", suite="atif",
                        agent_model=agent.get("model_name") if isinstance(agent.get("model_name"), str) else None,
                        is_correct=reward >= 1 if _is_number(reward) else None)
        result.final_answer = _message(agent_steps[-1].get("message")) if agent_steps else ""
    result.steps = [_step(step) for step in agent_steps if _dict(step.get("extra")).get("final_answer") is not True]
    if not ours:
        result.step_count = len(result.steps)
    result.trajectory = Trajectory(result.steps, result.final_answer, result.stop_reason).render()
    for kind, source in _OPENING:
        opening = next((step for step in steps if step.get("source") == source), None)
        if opening is not None:
            result.context_values[kind] = _message(opening.get("message"))
    if isinstance(agent.get("tool_definitions"), list):
        result.context_values["tools"] = agent["tool_definitions"]
    return result


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _message(value: Any) -> str:
    """An ATIF message as text: a multimodal one's text parts, and the path of each image or sound."""
    if isinstance(value, list):
        return "\n".join(_text(part.get("text") if part.get("type") == "text" else
                               f"[{part.get('type')}: {_dict(part.get('source')).get('path')}]")
                         for part in value if isinstance(part, dict))
    return _text(value) if value is not None else ""


def _step(step: dict[str, Any]) -> Step:
    answers = {str(result.get("source_call_id")): result.get("content")
               for result in _list(_dict(step.get("observation")).get("results")) if isinstance(result, dict)}
    calls = []
    for number, call in enumerate(item for item in _list(step.get("tool_calls")) if isinstance(item, dict)):
        extra = _dict(call.get("extra"))
        text = extra.get("arguments_text")
        index = extra.get("call_index", number)  # another harness's calls all reached its environment
        calls.append(ToolCall(name=_text(call.get("function_name", "")),
                              arguments=text if isinstance(text, str) else dumps(call.get("arguments", {})),
                              observation=_observation(answers.get(str(call.get("tool_call_id")))),
                              call_index=index if _is_int(index) else None))
    message = _message(step.get("message"))
    metrics = step.get("metrics")
    tokens = None
    if isinstance(metrics, dict):
        read = Tokens.read({"prompt_ids": metrics.get("prompt_token_ids"),
                            "completion_ids": metrics.get("completion_token_ids"), "logprobs": metrics.get("logprobs")})
        tokens = (read or Tokens()).to_dict()
        params = _dict(metrics.get("extra")).get("params")
        if isinstance(params, dict):
            tokens["params"] = params
    return Step(content=message or None, tool_calls=calls, tokens=tokens)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _observation(content: Any) -> dict[str, Any]:
    """What a tool returned: the JSON object an exported observation holds, else the content under ``content``."""
    text = _message(content)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    return value if isinstance(value, dict) else {"content": text}


def trajectory_files(path: Path) -> list[Path]:
    """The ATIF files ``path`` names: itself if it is a file, else the folder's ``*.atif.json`` files, by name."""
    if not path.is_dir():
        return [path.resolve()]  # the user's own file: a link of theirs is followed
    return sorted(child for child in path.iterdir() if child.name.endswith(SUFFIX) and not child.name.startswith("."))


def load_atif(path: Path) -> tuple[list[Result], dict[str, Any]]:
    """The results of an ATIF file or of a folder of them (see :func:`trajectory_files`), each with its context
    ids, and the context values by id, as a run directory gives them (``context.jsonl``). A file that is not JSON,
    or not a trajectory, is a :class:`ConfigError` naming it."""
    results: list[Result] = []
    values: dict[str, Any] = {}
    for file in trajectory_files(path):
        try:
            result = from_atif(read_json(file, "ATIF trajectory"))
        except ValueError as exc:
            raise ConfigError(f"{file}: {exc}") from None
        for kind, value in result.context_values.items():
            result.context[kind] = key = json_digest(value)
            values[key] = value
        result.context_values = {}
        results.append(result)
    return results, values


def export_atif(run_dir: Path, out: Path, prices: Mapping[str, Price] | None = None) -> int:
    """The run's latest result of each episode as an ATIF trajectory, one file per episode in the new folder
    ``out`` (``<task id>.trial<n>.atif.json``), written whole or not at all. Returns how many were written. A
    folder that is not a run, or an ``out`` that exists and is not an empty folder, is a :class:`ConfigError`."""
    if not (run_dir / RESULTS_FILE).is_file():
        raise ConfigError(f"{run_dir}: not a run directory (no {RESULTS_FILE})")
    target = Path(os.path.abspath(out))  # "." and ".." have no name to stage beside
    try:
        taken = target.exists() and not (target.is_dir() and not any(target.iterdir()))
    except OSError as exc:
        raise ConfigError(f"--out {out}: cannot read it ({exc.strerror})") from None
    if taken:
        raise ConfigError(f"--out {out}: exists; name a new folder for the trajectories (or an empty one)")
    if not target.parent.is_dir():
        raise ConfigError(f"--out {out}: its folder {target.parent} does not exist")
    records = run_records(run_dir)  # read only: the run may be going on
    if records.warning:
        print(f"warning: {terminal(records.warning)}", file=sys.stderr)
    context = read_context(run_dir)
    results = list(latest_by_task(records.results).values())
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        staging.mkdir()
        names: set[str] = set()
        for result in results:
            shown = {kind: context.get(key) for kind, key in result.context.items()}
            trajectory = to_atif(result, shown, session_id=Path(os.path.abspath(run_dir)).name, prices=prices)
            (staging / _file_name(result, names)).write_bytes(dumps_line(trajectory))
        staging.replace(target)  # an empty folder there is replaced
    except OSError as exc:
        raise ConfigError(f"cannot write {out}: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone once moved; left by a failure otherwise
    return len(results)


def _file_name(result: Result, taken: set[str]) -> str:
    """A file name for the result's trajectory from its task id, of safe characters, unique in ``taken`` (compared
    without case, for file systems that ignore it)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(result.task_id)).strip("._")[:100] or "task"
    name = f"{stem}.trial{result.trial}{SUFFIX}"
    if name.lower() in taken:
        name = f"{stem}-{json_digest([str(result.task_id), result.trial])[:8]}.trial{result.trial}{SUFFIX}"
    taken.add(name.lower())
    return name
