"""The synthesis engine both tracks share: a stage asks a model for one JSON object, checks it, asks again with
what was wrong, and keeps what it accepted.

A :class:`Stage` is a role's instructions, the JSON schema its answer must match and, optionally, a check that
looks further — a configuration consistent with its tools, or generated code that actually runs (the executable
track executes every stage's output and feeds the errors back the same way). An answer that fails is asked again
with the problems listed, at most ``max_asks`` times in all; then the stage fails with them. Every accepted answer
is stored under a key made of everything that determined it (stage, instructions, schema, inputs, model), so an
interrupted synthesis run again pays for nothing it already has. Requests are counted in the usage ledger under
the role ``synth:<stage>``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from occubench.core.tools import ToolSpec
from occubench.errors import OccuBenchError
from occubench.llm.ask import Unusable, ask_json
from occubench.llm.ledger import open_ledger, record
from occubench.llm.model import Model
from occubench.llm.parsing import extract_tagged_json
from occubench.llm.types import Usage
from occubench.util.jsonl import write_atomic
from occubench.util.jsonsafe import json_safe
from occubench.util.redact import Redactor

TAG = "output"

#: Problems beyond the schema: ``check(answer, inputs)`` returns what is wrong (empty when nothing is).
Check = Callable[[dict[str, Any], dict[str, Any]], list[str]]


class StageFailed(OccuBenchError):
    """A stage's answers still had problems after its last ask."""

    def __init__(self, stage: str, problems: list[str]) -> None:
        super().__init__(f"stage {stage}: no acceptable answer: {'; '.join(problems)}")
        self.stage = stage
        self.problems = problems


@dataclass(frozen=True)
class Stage:
    name: str
    instructions: str
    #: The JSON schema of the answer (an object).
    schema: dict[str, Any]
    check: Check | None = None
    max_asks: int = 3


@dataclass
class StageStats:
    """How a stage fared over a synthesis run (stored answers reused are not asked again, so not counted)."""

    asked: int = 0
    reused: int = 0
    #: Each ask that ended: the attempts it took and whether they gave an answer.
    outcomes: list[tuple[int, bool]] = field(default_factory=list)
    #: What the stage's answers cost, stored ones included (as they cost when first asked), failed asks too.
    usage: Usage = field(default_factory=Usage)

    @property
    def first_try(self) -> int:
        return sum(answered and attempts == 1 for attempts, answered in self.outcomes)

    @property
    def reasked(self) -> int:
        return sum(attempts - 1 for attempts, _ in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(not answered for _, answered in self.outcomes)


@dataclass
class Engine:
    """Runs stages with ``model``, keeping accepted answers in ``store`` (a directory)."""

    model: Model
    store: Path
    #: Shared by engines of one synthesis (a repair role's engine with the writing one's).
    stats: dict[str, StageStats] = field(default_factory=dict)
    #: Stages run in parallel threads; counting is under this lock (shared like the stats).
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Masks every known key in what is asked, stored and answered: executed code's feedback is in the inputs.
    redactor: Redactor = field(default_factory=Redactor)

    def run(self, stage: Stage, inputs: dict[str, Any]) -> dict[str, Any]:
        """The stage's accepted answer for ``inputs``: stored, or asked for (and stored)."""
        inputs = self.redactor.value(inputs)
        with self.lock:
            stats = self.stats.setdefault(stage.name, StageStats())
        path = self.store / stage.name / f"{self._key(stage, inputs)}.json"
        if (stored := _stored(path)) is not None:
            with self.lock:
                stats.reused += 1
                stats.usage.add(Usage.from_dict(stored.get("usage") or {}))
            return dict(stored["answer"])
        role = f"synth:{stage.name}"
        with self.lock:
            stats.asked += 1
        try:
            with open_ledger() as ledger:  # what this answer cost, kept with it
                answer, asks = self._ask(stage, inputs, stats)
                answer = self.redactor.value(answer)
        finally:
            usage = ledger.by_role.get(role, Usage())
            record(role, usage)  # and counted in the caller's ledger, if any
            with self.lock:
                stats.usage.add(usage)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Whole or absent: an interrupted run leaves no half answer to reuse.
        write_atomic(path, json.dumps({"stage": stage.name, "inputs": json_safe(inputs), "answer": answer,
                                       "asks": asks, "usage": usage.to_dict()}, ensure_ascii=False, indent=1))
        return answer

    def _key(self, stage: Stage, inputs: dict[str, Any]) -> str:
        payload = [stage.name, stage.instructions, stage.schema, json_safe(inputs), self.model.name,
                   self.model.params]
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]

    def _ask(self, stage: Stage, inputs: dict[str, Any], stats: StageStats) -> tuple[dict[str, Any], int]:
        model = Model(self.model.client, self.model.name, self.model.params, role=f"synth:{stage.name}")
        spec = ToolSpec(stage.name, "", stage.schema)  # the tool contract's strict schema check, reused
        # The first line names the stage, for logs and for the mock server, which plays every stage.
        messages = [{"role": "system", "content": f"Stage: {stage.name}\n\n{stage.instructions}\n\nReply with "
                     f"exactly one JSON object between <{TAG}> and </{TAG}> tags, matching this JSON schema:\n"
                     f"{json.dumps(stage.schema, ensure_ascii=False)}"},
                    {"role": "user", "content": json.dumps(json_safe(inputs), ensure_ascii=False, indent=1)}]
        # The model corrects its whole answer, so it sees it whole.
        answer = ask_json(model, messages, partial(_parse, spec, stage, inputs), reasks=stage.max_asks - 1,
                          correction=_correction, label=f"[SYNTH] Unusable answer to stage {stage.name}",
                          echo_whole=True)
        with self.lock:
            stats.outcomes.append((answer.attempts, answer.value is not None))
        if answer.value is None:
            raise StageFailed(stage.name, answer.problems)
        return answer.value, answer.attempts


def _parse(spec: ToolSpec, stage: Stage, inputs: dict[str, Any], content: str | None) -> dict[str, Any]:
    """The answer in ``content``, if it parses, matches the stage's schema (``spec``) and passes its check."""
    answer = extract_tagged_json(content, TAG)
    problem = spec.check(answer)
    problems = [problem] if problem else (stage.check(answer, inputs) if stage.check else [])
    if problems:
        raise Unusable(problems)
    return answer


def _correction(problems: list[str]) -> str:
    return ("Your answer cannot be used:\n" + "\n".join(f"- {p}" for p in problems) +
            f"\nReply again with the whole corrected object between <{TAG}> and </{TAG}> tags.")


def _stored(path: Path) -> dict[str, Any] | None:
    """A stored answer; one that cannot be read (edited by hand, say) is asked for again."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, dict) and isinstance(stored.get("answer"), dict) else None
