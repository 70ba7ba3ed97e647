"""Inspect logs of our tasks as results, so that ``occubench report`` (leaderboard, E0–E3 table, radar, paired
comparison) reads an ``.eval`` log as it reads a run directory: one result per sample and epoch (trial = epoch - 1),
its verdict and details from the scorer's metadata, its settings from the task's, usage by role from Inspect's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from occubench.core.results import ErrorInfo, Result
from occubench.errors import ERROR_KINDS, ConfigError
from occubench.llm.types import Usage

#: Our roles, by the Inspect model role that plays them.
_ROLES = {"world": "world", "grader": "verifier", "colleague": "npc"}
#: Error kinds by the class name a sample's traceback ends with: ours, and the openai SDK's (Inspect's providers
#: raise them once their retries are spent).
_KINDS = {
    **{cls.__name__: kind for cls, kind in ERROR_KINDS},
    **dict.fromkeys(("RateLimitError", "InternalServerError", "APIConnectionError", "APITimeoutError"),
                    "infrastructure"),
    **dict.fromkeys(("BadRequestError", "AuthenticationError", "PermissionDeniedError", "NotFoundError",
                     "UnprocessableEntityError"), "request_rejected"),
}
SUFFIX = ".eval"


def read_log(path: Path) -> list[Result]:
    """The results in the Inspect log at ``path``; :class:`ConfigError` naming it when it cannot be read or is not a
    log of an occubench task."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ConfigError(f"{path}: reading an Inspect log needs inspect_ai (pip install 'occubench[inspect]')") \
            from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the user's input, named with its reason
        raise ConfigError(f"{path}: not a readable Inspect log ({type(exc).__name__}: {exc})") from None
    settings = log.eval.metadata or {}
    if "suite" not in settings:
        raise ConfigError(f"{path}: a log of the Inspect task {log.eval.task!r}, not of an occubench task")
    roles = {_ROLES[name]: str((config[0] if isinstance(config, list) else config).model)
             for name, config in (log.eval.model_roles or {}).items() if name in _ROLES}
    fallbacks = settings.get("fallbacks")
    for role, fallback in (fallbacks.items() if isinstance(fallbacks, dict) else ()):
        if fallback in roles:  # a role played by another's model when no Inspect role was given for it
            roles.setdefault(role, roles[fallback])
    run: dict[str, Any] = {"agent_model": log.eval.model, "world_model": roles.get("world"),
                           "verifier_model": roles.get("verifier"), "npc_model": roles.get("npc"),
                           "suite": settings["suite"], "fault_mode": settings.get("fault_mode")}
    run.update({key: settings[key] for key in ("env_mode", "fault_count", "fault_duration", "with_plan", "seed")
                if key in settings})
    return [_result(sample, run, roles) for sample in log.samples or []]


def _usage(sample: Any, agent_model: str, roles: dict[str, str]) -> dict[str, Usage]:
    usage = {}
    for inspect_role, tokens in sample.role_usage.items():
        if inspect_role in _ROLES:
            usage[_ROLES[inspect_role]] = Usage(tokens.input_tokens, tokens.output_tokens)
    # Inspect counts a model's tokens in every role it plays; the agent's are what the roles leave.
    total = sample.model_usage.get(agent_model)
    if total is not None:
        shared = [usage[role] for role, model in roles.items() if model == agent_model and role in usage]
        usage["agent"] = Usage(max(0, total.input_tokens - sum(u.prompt_tokens for u in shared)),
                               max(0, total.output_tokens - sum(u.completion_tokens for u in shared)))
    return usage


def _result(sample: Any, run: dict[str, Any], roles: dict[str, str]) -> Result:
    metadata = sample.metadata or {}
    result = Result(task_id=sample.id, task_scenario_name=str(metadata.get("scenario", "")),
                    category=str(metadata.get("category", "")), domain=str(metadata.get("domain", "")),
                    difficulty_level=metadata.get("difficulty"), trial=sample.epoch - 1,
                    duration_s=sample.total_time or 0.0, usage=_usage(sample, run["agent_model"], roles), **run)
    score = next(iter((sample.scores or {}).values()), None)
    if sample.error is not None or score is None:
        message = sample.error.message if sample.error is not None else "the sample was never scored"
        last = (sample.error.traceback or "").strip().splitlines()[-1:] if sample.error is not None else []
        name = last[0].split(":", 1)[0].rpartition(".")[2] if last else ""
        result.status, result.is_correct, result.stop_reason = "error", None, "error"
        result.error = ErrorInfo(_KINDS.get(name, "internal"), message)
        return result
    details = score.metadata or {}
    loaded = Result.from_dict({key: details[key] for key in ("votes", "verdict_details", "env_info", "fault_events",
                                                             "stop_reason", "step_count", "trajectory", "steps")
                               if key in details} | {"task_id": sample.id})
    result.votes, result.verdict_details, result.env_info = loaded.votes, loaded.verdict_details, loaded.env_info
    result.fault_events, result.stop_reason = loaded.fault_events, loaded.stop_reason
    result.step_count, result.trajectory, result.steps = loaded.step_count, loaded.trajectory, loaded.steps
    result.is_correct = bool(details.get("is_correct"))
    result.feedback, result.final_answer = score.explanation or "", score.answer or ""
    return result
