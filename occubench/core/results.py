"""The result of one episode, as written to ``results.jsonl`` and read back by every summary and report.

The OccuBench README's fields stay top-level and unchanged. What a world reports about the episode (its
``Environment.info()``) lives in ``env_info`` and what a suite's verifier adds (code checks, a state diff, a
judge's label, a workplace day's scores) in ``verdict_details``, so no world or suite can overwrite a core field.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from occubench.core.trajectory import Step, ToolCall
from occubench.core.verifier import Vote
from occubench.llm.types import Usage

#: The OccuBench README's fields in its order, then ours; the sections and anything else follow.
RESULT_FIELDS = (
    "task_id", "task_scenario_name", "category", "domain", "difficulty_level", "agent_model", "world_model",
    "env_mode", "fault_count", "fault_duration", "with_plan", "is_correct", "feedback", "step_count", "trajectory",
    "status", "votes", "usage", "duration_s", "error", "trial",
)

@dataclass
class ErrorInfo:
    """Why a task could not be evaluated; never the agent's failure."""

    kind: str
    message: str


@dataclass
class FaultEvent:
    """One call the harness faulted (``--fault-mode harness``)."""

    call_index: int
    tool: str
    kind: str  # "explicit" or "implicit"
    fault: str
    detail: str


@dataclass
class FaultWindow:
    first_call: int
    last_call: int
    kind: str
    #: Calls of the window that were made (0 when the episode ended first).
    fired: int = 0


@dataclass
class LiveHint:
    """A hint a person watching the run sent the agent (``--live-hints``, through ``occubench view``), as it was
    delivered: who sent it and when, its guidance tier (1 to 3), its text, and the tool call whose observation
    carried it to the agent (1 for the first call of the episode)."""

    who: str
    at: str
    tier: int
    text: str
    step: int

    @classmethod
    def read(cls, item: Any) -> LiveHint | None:
        """A hint from a results line; None when its fields are missing or of the wrong type."""
        if not isinstance(item, dict):
            return None
        who, at, tier, text, step = (item.get(name) for name in ("who", "at", "tier", "text", "step"))
        if not (isinstance(who, str) and isinstance(at, str) and isinstance(text, str)):
            return None
        if not isinstance(tier, int) or isinstance(tier, bool) or not isinstance(step, int) or isinstance(step, bool):
            return None
        return cls(who, at, tier, text, step)


@dataclass
class Result:
    task_id: int | str
    task_scenario_name: str = ""
    category: str = ""
    domain: str = ""
    difficulty_level: int | None = None
    agent_model: str | None = None
    world_model: str | None = None
    env_mode: str = "E0"
    fault_count: int = 0
    fault_duration: int = 0
    with_plan: bool = False
    #: None on error records, so they cannot be averaged in by mistake.
    is_correct: bool | None = None
    feedback: str = ""
    step_count: int = 0
    trajectory: str = ""
    status: str = "ok"
    votes: list[Vote] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=dict)
    duration_s: float = 0.0
    error: ErrorInfo | None = None
    trial: int = 0
    suite: str | None = None
    config_hash: str | None = None
    verifier_model: str | None = None
    #: The model that played the workplace's colleagues, if any.
    npc_model: str | None = None
    fault_mode: str | None = None
    seed: int | None = None
    final_answer: str = ""
    #: "answer", "max_steps", "context_length" or "error".
    stop_reason: str = "answer"
    steps: list[Step] = field(default_factory=list)
    fault_events: list[FaultEvent] = field(default_factory=list)
    fault_windows: list[FaultWindow] = field(default_factory=list)
    #: What the world reported about the episode (``Environment.info()``).
    env_info: dict[str, Any] = field(default_factory=dict)
    #: What the suite's verifier added beside the verdict.
    verdict_details: dict[str, Any] = field(default_factory=dict)
    #: What the agent and the judge were shown, by kind (instruction, system_prompt, tools, judge_prompt): ids
    #: of values kept once per run directory in ``context.jsonl`` (``occubench.store.read_context``).
    context: dict[str, str] = field(default_factory=dict)
    #: The agent's conversation after its system prompt and the instruction (empty for scripted agents).
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: What an agent program printed (``--agent command:...``): ``command``, ``exit_code``, ``stdout``, ``stderr``.
    agent_output: dict[str, Any] = field(default_factory=dict)
    #: Hints a person watching the run sent the agent during the episode (``--live-hints``), in the order they
    #: reached it; written only when there are any. Such a result is never pooled with results without
    #: (:func:`live_groups`).
    live_hints: list[LiveHint] = field(default_factory=list)
    #: What earlier attempts of this (task, trial) spent, per role: error records this result replaced. Their
    #: tokens were paid for, so usage and cost count them.
    earlier_usage: dict[str, Usage] = field(default_factory=dict)
    #: Keys this version does not know (another harness's file), written back as they were.
    extra: dict[str, Any] = field(default_factory=dict)
    #: The values behind ``context``, until the store writes them and fills in their ids; never serialized.
    context_values: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def passed(self) -> bool:
        return self.ok and self.is_correct is True

    @property
    def key(self) -> tuple[int | str, int]:
        """A result is one trial of one task."""
        return self.task_id, self.trial

    @property
    def guidance(self) -> int:
        """The workplace guidance tier the episode was run with (``--guidance``); 0 when it has none (tier 0, other
        suites and files written before tiers existed)."""
        tier = self.env_info.get("guidance")
        return tier if isinstance(tier, int) and not isinstance(tier, bool) else 0

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [call for step in self.steps for call in step.tool_calls]

    def lookup(self, name: str) -> Any:
        """A field by name as a user gives it (``compare --by judge_label``): a top-level field, else a key of
        ``verdict_details``, ``env_info`` or ``extra``; None when there is none."""
        if name in _FIELD_NAMES:
            return getattr(self, name)
        for section in (self.verdict_details, self.env_info, self.extra):
            if name in section:
                return section[name]
        return None

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _UNWRITTEN}
        data.update(votes=[asdict(v) for v in self.votes], usage={r: u.to_dict() for r, u in self.usage.items()},
                    earlier_usage={r: u.to_dict() for r, u in self.earlier_usage.items()},
                    error=asdict(self.error) if self.error else None, steps=[asdict(s) for s in self.steps],
                    fault_events=[asdict(e) for e in self.fault_events],
                    fault_windows=[asdict(w) for w in self.fault_windows],
                    live_hints=[asdict(h) for h in self.live_hints])
        if not self.live_hints:  # the field is new: a result without hints keeps the shape it always had
            del data["live_hints"]
        return {**{k: data.pop(k) for k in RESULT_FIELDS}, **data, **self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """A record from a results file of any version (the original OccuBench harness's included). Values of the
        wrong type are replaced by defaults rather than failing the whole file."""
        data = dict(data)
        known = {f.name for f in fields(cls)}
        extra = {k: data.pop(k) for k in list(data) if k not in known}
        task_id = data.get("task_id")
        result = cls(task_id=task_id if isinstance(task_id, (int, str)) and not isinstance(task_id, bool)
                     else str(task_id))
        for f in fields(cls):
            if f.name in ("task_id", *_UNWRITTEN) or f.name not in data:
                continue
            value = _read_field(f.name, data[f.name])
            if value is not _INVALID:
                setattr(result, f.name, value)
        result.extra = extra
        return result


_UNWRITTEN = ("extra", "context_values")
_FIELD_NAMES = frozenset(f.name for f in fields(Result)) - {*_UNWRITTEN, "env_info", "verdict_details"}
_INVALID = object()
_SCALARS: dict[str, tuple[type, ...]] = {
    "task_scenario_name": (str,), "category": (str,), "domain": (str,), "difficulty_level": (int, type(None)),
    "agent_model": (str, type(None)), "world_model": (str, type(None)), "env_mode": (str,), "fault_count": (int,),
    "fault_duration": (int,), "with_plan": (bool,), "is_correct": (bool, type(None)), "feedback": (str,),
    "step_count": (int,), "trajectory": (str,), "status": (str,), "duration_s": (int, float), "trial": (int,),
    "suite": (str, type(None)), "config_hash": (str, type(None)), "verifier_model": (str, type(None)),
    "npc_model": (str, type(None)),
    "fault_mode": (str, type(None)), "seed": (int, type(None)), "final_answer": (str,), "stop_reason": (str,),
    "env_info": (dict,), "verdict_details": (dict,), "agent_output": (dict,),
}



def _objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _build(cls: type, item: dict[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    try:
        return cls(**{k: v for k, v in item.items() if k in names})
    except TypeError:
        return None


def _read_field(name: str, value: Any) -> Any:
    if name in _SCALARS:
        ok = isinstance(value, _SCALARS[name]) and not (isinstance(value, bool) and bool not in _SCALARS[name])
        return value if ok else _INVALID
    if name == "votes":
        return [v for item in _objects(value) if (v := _build(Vote, item)) is not None]
    if name in ("usage", "earlier_usage"):
        return {str(role): Usage.from_dict(u) for role, u in value.items() if isinstance(u, dict)} \
            if isinstance(value, dict) else _INVALID
    if name == "error":
        return ErrorInfo(str(value.get("kind", "internal")), str(value.get("message", ""))) \
            if isinstance(value, dict) else None
    if name == "steps":
        return [Step(content=s.get("content"), tool_calls=[c for call in _objects(s.get("tool_calls"))
                                                            if (c := _build(ToolCall, call)) is not None],
                     tokens=s.get("tokens") if isinstance(s.get("tokens"), dict) else None)
                for s in _objects(value)]
    if name == "fault_events":
        return [e for item in _objects(value) if (e := _build(FaultEvent, item)) is not None]
    if name == "context":
        return {str(k): v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else _INVALID
    if name == "messages":
        return _objects(value)
    if name == "fault_windows":
        return [w for item in _objects(value) if (w := _build(FaultWindow, item)) is not None]
    if name == "live_hints":
        return [h for item in _objects(value) if (h := LiveHint.read(item)) is not None]
    return _INVALID


#: What a result's agent label gains in reports when a person's live hints reached its agent (``--live-hints``).
LIVE_HINTS_LABEL = " + live hints"


def with_live_label(result: Result) -> Result:
    """``result`` as reports show it: a copy whose ``agent_model`` ends in :data:`LIVE_HINTS_LABEL` when live hints
    reached its agent, so every table that groups by agent keeps it apart; else ``result`` itself. Labelling a
    labelled result changes nothing."""
    label = result.agent_model or "-"
    if not result.live_hints or label.endswith(LIVE_HINTS_LABEL):
        return result
    return replace(result, agent_model=label + LIVE_HINTS_LABEL)


def agent_model_of(result: Result) -> str | None:
    """The agent's model as the run recorded it, without the label :func:`with_live_label` adds (prices are looked
    up by it)."""
    name = result.agent_model
    if result.live_hints and name is not None and name.endswith(LIVE_HINTS_LABEL):
        return name[:-len(LIVE_HINTS_LABEL)]
    return name


def live_groups(results: Iterable[Result]) -> list[tuple[str, list[Result]]]:
    """The one rule every table follows: results whose agent got live hints are never pooled with results without.
    The results without, then those with (labelled by :func:`with_live_label`), each with the suffix its group's
    name takes (``""``, then :data:`LIVE_HINTS_LABEL`); a group with no result is left out."""
    alone: list[Result] = []
    hinted: list[Result] = []
    for result in results:
        if result.live_hints:
            hinted.append(with_live_label(result))
        else:
            alone.append(result)
    return [(suffix, group) for suffix, group in (("", alone), (LIVE_HINTS_LABEL, hinted)) if group]
