"""The harness fault injection: seeded schedules, explicit faults without side effects, silent degradation that
stays valid JSON, the fault log, and recovery figures."""

from __future__ import annotations

import json
import random

import pytest

from occubench.cli import main
from occubench.config import FAULT_LEVELS, FaultLevel, RunConfig
from occubench.core.environment import Environment, JSONObject
from occubench.core.faults import FaultInjector, degrade, fault_prompt, fault_schedule, recovery
from occubench.core.results import FaultEvent, FaultWindow, Result
from occubench.core.tools import ToolSpec
from occubench.core.trajectory import Step, ToolCall
from occubench.errors import ConfigError
from occubench.report.robustness import robustness_score, robustness_table
from occubench.report.tables import modes_table

TOOLS = [ToolSpec("post", "Add an entry.", {"type": "object", "properties": {"amount": {"type": "integer"}},
                                            "required": ["amount"]}, writes=True),
         ToolSpec("list", "The entries and their balance.", {"type": "object"}, writes=False)]


class Ledger(Environment):
    """A code world with state: each `post` adds an entry; `list` returns them with a balance."""

    def __init__(self) -> None:
        self.entries: list[int] = []

    def tools(self) -> list[ToolSpec]:
        return TOOLS

    def _call(self, name: str, arguments: JSONObject) -> JSONObject:
        if name == "post":
            self.entries.append(arguments["amount"])
        return {"entries": [{"n": i, "amount": a} for i, a in enumerate(self.entries)], "balance": sum(self.entries),
                "currency": "EUR", "count": len(self.entries)}

    def reset(self) -> None:
        self.entries.clear()


@pytest.mark.parametrize("mode", ["E1", "E2", "E3"])
@pytest.mark.parametrize("count, duration", [(2, 2), (1, 3), (3, 1), (4, 2)])
def test_schedules_are_seeded_spaced_and_never_on_the_first_call(mode: str, count: int, duration: int) -> None:
    for task_id in range(30):
        windows = fault_schedule(mode, count, duration, seed=7, task_id=task_id)
        assert windows == fault_schedule(mode, count, duration, seed=7, task_id=task_id)
        assert len(windows) == count and windows[0].first_call >= 1
        assert all(w.last_call - w.first_call + 1 == duration for w in windows)
        assert all(b.first_call > a.last_call + 1 for a, b in zip(windows, windows[1:]))  # a clean call between
        assert windows[-1].last_call <= 2 * count * duration
    kinds = [w.kind for w in fault_schedule(mode, 4, 1, seed=0, task_id=1)]
    assert kinds == {"E1": ["explicit"] * 4, "E2": ["implicit"] * 4, "E3": ["explicit", "implicit"] * 2}[mode]


def test_different_tasks_and_seeds_get_different_schedules() -> None:
    by_task = {repr(fault_schedule("E2", 2, 2, seed=7, task_id=t)) for t in range(40)}
    assert len(by_task) > 5
    assert fault_schedule("E2", 2, 2, seed=1, task_id=11) != fault_schedule("E2", 2, 2, seed=2, task_id=11) or \
        fault_schedule("E2", 2, 2, seed=3, task_id=11) != fault_schedule("E2", 2, 2, seed=2, task_id=11)
    assert fault_schedule("E0", 2, 2, seed=7, task_id=1) == [] and fault_schedule("E1", 0, 2, seed=7, task_id=1) == []


def test_explicit_faults_do_not_reach_the_world() -> None:
    world = Ledger()
    env = FaultInjector(world, "E1", 2, 2, seed=7, task_id="t1")
    faulted = {c for w in env.windows for c in range(w.first_call, w.last_call + 1)}
    for index in range(10):
        observation = env.call("post", {"amount": 10})
        assert ("error" in observation) == (index in faulted)
    assert len(world.entries) == 10 - 4  # the four faulted posts changed nothing
    assert [e.call_index for e in env.events] == sorted(faulted)
    assert {e.kind for e in env.events} == {"explicit"}
    assert all(e.tool == "post" and e.fault and e.detail for e in env.events)


def test_implicit_faults_call_the_world_and_degrade_silently() -> None:
    world = Ledger()
    env = FaultInjector(world, "E2", 2, 2, seed=3, task_id=5)
    observations = [env.call("post", {"amount": n}) for n in range(12)]
    assert len(world.entries) == 12  # implicit faults are real calls
    for event in env.events:
        observation = observations[event.call_index]
        assert "error" not in observation and json.loads(json.dumps(observation)) == observation
        assert observation != world.call("list", {}) or event.fault == "none_applicable"
    assert len(env.events) == 4
    assert env.fired_windows() == [FaultWindow(w.first_call, w.last_call, "implicit", fired=2) for w in env.windows]


def test_a_window_the_episode_never_reached_is_recorded_as_not_fired() -> None:
    env = FaultInjector(Ledger(), "E3", 2, 2, seed=7, task_id=11)
    last = env.windows[-1]
    for _ in range(last.first_call):
        env.call("list", {})
    windows = env.fired_windows()
    assert windows[-1].fired == 0 and windows[0].fired == 2
    env.reset()
    assert env.events == [] and env.calls == 0


@pytest.mark.parametrize("seed", range(200))
def test_degrade_keeps_valid_json_and_adds_no_error_key(seed: int) -> None:
    rng = random.Random(seed)
    observation = {"items": [{"id": i, "tags": ["a", "b", "c"][: rng.randint(0, 3)]} for i in range(rng.randint(0, 5))],
                   "total": rng.randint(0, 9), "owner": rng.choice(["x", None]), "meta": {"page": 1, "pages": 3}}
    earlier = [{**observation, "total": 99}] if seed % 2 else []
    degraded, fault, detail = degrade(observation, rng, earlier)
    assert "error" not in degraded and json.loads(json.dumps(degraded)) == degraded
    assert set(degraded) <= set(observation) and detail
    assert degraded != observation or fault == "none_applicable"


def test_degrade_transforms() -> None:
    listing = {"units": [{"id": n} for n in range(5)]}
    cut, fault, detail = degrade(listing, random.Random(0), [])
    assert fault == "truncated_list" and len(cut["units"]) in (1, 2) and detail.startswith("units: 5 items cut to")
    assert len(listing["units"]) == 5  # the world's own observation is untouched
    faults = {degrade({"price": 10, "as_of": "today"}, random.Random(s), [{"price": 9, "as_of": "yesterday"}])[1]
              for s in range(40)}
    assert faults == {"dropped_fields", "null_field", "stale_values"}
    stale = next(d for s in range(40) if (d := degrade({"price": 10}, random.Random(s), [{"price": 9}]))[1]
                 == "stale_values")
    assert stale[0] == {"price": 9}
    assert degrade({}, random.Random(0), [])[1] == "none_applicable"


def test_rejected_calls_reach_the_injector_as_contract_errors() -> None:
    world = Ledger()
    env = FaultInjector(world, "E0", 0, 0, seed=7, task_id=1)
    assert env.call("post", {"amount": "ten"})["error"] == "invalid_arguments"
    assert env.call("teleport", {})["error"] == "unknown_tool"
    assert world.entries == [] and env.calls == 2  # counted as calls, never run by the world
    assert env.tools() == TOOLS


def test_recovery_counts_retries_and_requeries() -> None:
    def record(calls: list[str], events: list[tuple[int, str, str]]) -> Result:
        return Result(task_id=1, steps=[Step(None, [ToolCall(n, "{}", {}, i) for i, n in enumerate(calls)])],
                      fault_events=[FaultEvent(i, t, k, "fault", "detail") for i, t, k in events])
    records = [
        record(["a", "b", "b", "c"], [(1, "b", "explicit")]),              # retried at once
        record(["a", "b", "c", "d", "e", "b"], [(1, "b", "explicit")]),    # only 4 calls later: not counted
        record(["a", "b", "a", "b"], [(1, "b", "implicit"), (2, "a", "implicit")]),  # b again; a never again
    ]
    assert recovery(records) == type(recovery([]))(explicit=2, explicit_retried=1, implicit=2, implicit_requeried=1)
    other_arguments = record(["a", "b", "b"], [(1, "b", "explicit")])
    other_arguments.steps[0].tool_calls[2].arguments = '{"id": 2}'
    assert recovery([other_arguments]).explicit_retried == 0  # a different query is not a retry
    assert isinstance(fault_schedule("E1", 1, 1, 0, 0)[0], FaultWindow)


def test_a_fifth_fault_level_is_one_table_entry(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """E4 (silent degradation alone, left out of R) added to the table, and nothing else: the config accepts it,
    the command line offers it, the schedule and the injector use its kind, the prompt injection words it, R ignores
    it unless marked to take it in, and the report gives it a column."""
    monkeypatch.setitem(FAULT_LEVELS, "E4", FaultLevel("E4", ("implicit",), "stale data only", in_robustness=False))
    assert RunConfig(env_mode="E4").env_mode == "E4"
    with pytest.raises(ConfigError, match="E5"):
        RunConfig.create({"env_mode": "E5"})
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "E4 stale data only" in " ".join(capsys.readouterr().out.split())
    windows = fault_schedule("E4", 3, 1, 0, "t")
    assert len(windows) == 3 and {w.kind for w in windows} == {"implicit"}
    assert fault_prompt("E4", 1, 1) == fault_prompt("E2", 1, 1)
    injector = FaultInjector(Ledger(), "E4", 1, 1, 0, "t")
    for _ in range(4):
        injector.call("list", {})
    assert [event.kind for event in injector.events] == ["implicit"]
    rates = {"E0": 0.8, "E1": 0.6, "E2": 0.4, "E3": 0.5, "E4": 0.1}
    assert robustness_score(rates) == pytest.approx(0.5)  # min(E1, E2, E3) / E0, as the paper defines R
    monkeypatch.setitem(FAULT_LEVELS, "E4", FaultLevel("E4", ("implicit",), "stale data only"))
    assert robustness_score(rates) == pytest.approx(0.125)  # a level R takes in: the worst of four
    table = modes_table(robustness_table([Result(task_id=1, env_mode=level, is_correct=True)
                                          for level in FAULT_LEVELS]))
    assert table.columns[-6:] == ["E0", "E1", "E2", "E3", "E4", "R"] and table.rows[0][-6:] == ["100.0%"] * 5 + ["1.00"]
    assert table.title.endswith("R = min(E1, E2, E3, E4) / E0")
