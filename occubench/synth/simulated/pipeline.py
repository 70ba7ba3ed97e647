"""``occubench synth simulated``: scenarios → sub-topics and a reference document → per sub-topic an environment and a
task (plan and rubric) → calibration with and without the plan → repair of the unsolvable → the kept tasks written in
the OccuBench data layout, with a synthesis report.

Everything a stage answered is stored by its inputs and every calibration run resumes, so running the same command
after an interruption sends no request that was already answered.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console

from occubench.errors import ConfigError
from occubench.llm.model import Model
from occubench.synth.engine import Engine, StageFailed
from occubench.synth.session import Session, open_session
from occubench.synth.simulated import stages
from occubench.synth.simulated.calibrate import calibrate
from occubench.synth.simulated.candidate import Candidate, Scenario
from occubench.synth.simulated.config import SimulatedSynthConfig
from occubench.synth.simulated.faithful import gate, twins
from occubench.synth.simulated.output import SynthesisReport, write_output
from occubench.util.console import rich_console
from occubench.util.jsonl import iter_jsonl
from occubench.util.text import markup


def scenarios_of(session: Session, config: SimulatedSynthConfig) -> list[Scenario]:
    if config.scenarios_file:
        path = Path(config.scenarios_file)
        found = []
        for number, row in iter_jsonl(path):
            values = [row.get(key) for key in ("task_scenario_name", "category", "domain")]
            if not all(isinstance(value, str) and value.strip() for value in values):
                raise ConfigError(f"{path}:{number}: expected task_scenario_name, category and domain as non-empty "
                                  "strings")
            found.append(Scenario(*(str(value).strip() for value in values)))
        if not found:
            raise ConfigError(f"--scenarios-file: {path} holds no scenario")
        return _distinct(found)
    assert config.category is not None  # checked by the settings
    if config.scenario:
        return [Scenario(config.scenario.strip(), config.category, (config.domain or config.category).strip())]
    answer = session.engine.run(stages.SCENARIOS, {"category": config.category, "count": config.generate_scenarios,
                                                   "avoid": []})
    made = [Scenario(item["task_scenario_name"].strip(), config.category, config.domain or item["domain"].strip())
            for item in answer["scenarios"]]
    return _distinct(made)[:config.generate_scenarios]


def _distinct(scenarios: list[Scenario]) -> list[Scenario]:
    seen: set[str] = set()
    kept = []
    for scenario in scenarios:
        key = " ".join(scenario.name.lower().split())
        if key not in seen:
            seen.add(key)
            kept.append(scenario)
    return kept


def _make(session: Session, candidate: Candidate, reference: dict[str, Any]) -> Candidate:
    scenario = candidate.scenario
    context = {"scenario": scenario.name, "category": scenario.category, "domain": scenario.domain,
               "subtopic": candidate.subtopic, "reference": reference}
    try:
        candidate.environment = session.engine.run(stages.ENVIRONMENT, context)
        candidate.task = session.engine.run(stages.TASK, {**context, "environment": candidate.environment})
    except StageFailed as exc:
        candidate.status, candidate.reason = "invalid", str(exc)
    return candidate


def candidates_of(session: Session, config: SimulatedSynthConfig, scenarios: list[Scenario]) -> list[Candidate]:
    candidates: list[Candidate] = []
    references = {}
    for scenario in scenarios:
        inputs = {"scenario": scenario.name, "category": scenario.category, "domain": scenario.domain}
        try:
            subtopics = session.engine.run(stages.SUBTOPICS, {**inputs, "count": config.tasks_per_scenario})
            references[scenario] = session.engine.run(stages.REFERENCE, {**inputs, "subtopics": subtopics})
        except StageFailed as exc:
            session.console.print(f"[yellow]scenario {scenario.name!r} dropped: {exc}[/yellow]")
            continue
        for subtopic in subtopics["subtopics"]:
            candidates.append(Candidate(len(candidates) + 1, scenario, subtopic))
    session.console.print(f"{len(scenarios)} scenario(s), {len(candidates)} sub-topic(s): writing environments "
                          "and tasks")
    with ThreadPoolExecutor(config.max_concurrency) as pool:
        for done, candidate in enumerate(pool.map(lambda c: _make(session, c, references[c.scenario]), candidates),
                                         start=1):
            outcome = candidate.reason if candidate.status == "invalid" else "environment and task ready"
            session.console.print(f"[{done}/{len(candidates)}] #{candidate.number} {markup(candidate.scenario.name)}: "
                                  f"{markup(candidate.subtopic.get('name'))}: {markup(outcome)}")
    return candidates


def classify(candidate: Candidate, config: SimulatedSynthConfig) -> None:
    """Kept, trivial, unsolvable or incomplete, from the latest calibration round."""
    latest = candidate.calibrations[-1]
    if latest.errors:
        candidate.status = "incomplete"
        candidate.reason = (f"{latest.errors} calibration run(s) ended in an error (endpoint trouble, not the "
                            "task's fault); run the same command again to retry them")
        return
    best_with = max((rate.rate or 0.0 for rate in latest.with_plan.values()), default=0.0)
    weakest = config.agent_model[-1]
    weakest_rate = latest.without_plan[weakest].rate or 0.0 if weakest in latest.without_plan else 0.0
    without = [rate.rate or 0.0 for rate in latest.without_plan.values()] or [0.0]
    if best_with < config.solvable_threshold:
        candidate.status = "unsolvable"
        candidate.reason = (f"with the plan the best agent passed {best_with:.0%} of runs, below the solvable "
                            f"threshold {config.solvable_threshold:.0%}")
    elif weakest_rate >= config.trivial_threshold:
        candidate.status = "trivial"
        candidate.reason = f"the weakest agent ({weakest}) passed {weakest_rate:.0%} of runs without the plan"
    else:
        mean = sum(without) / len(without)
        candidate.status, candidate.reason = "kept", ""
        candidate.difficulty = 1 if mean >= config.easy_threshold else 3 if mean < config.hard_threshold else 2


def _repair(session: Session, repairer: Engine, candidate: Candidate) -> None:
    latest = candidate.calibrations[-1]
    try:
        answer = repairer.run(stages.REPAIR, {
            "scenario": candidate.scenario.name, "subtopic": candidate.subtopic,
            "environment": candidate.environment, "task": candidate.task, "calibration": latest.to_dict(),
            "failed_runs_with_plan": latest.failures})
    except StageFailed as exc:
        candidate.reason += f"; the repair gave no usable answer: {exc}"
        return
    candidate.environment, candidate.task = answer["environment"], answer["task"]
    candidate.repairs.append({"diagnosis": answer["diagnosis"], "explanation": answer["explanation"]})
    candidate.status = "pending"


def synthesize(config: SimulatedSynthConfig, *, console: Console | None = None) -> SynthesisReport:
    """Make, calibrate and write the worlds and tasks ``config`` asks for; returns the synthesis report (also
    written to ``<out>/synthesis/report.json``). Raises :class:`ConfigError` for bad input."""

    console = console or rich_console(stderr=True)
    if not config.agent_model or not config.world_model:
        raise ConfigError("--agent-model (one or more calibration agents) and --world-model are required")
    roles = {"agent": config.agent_model[0], "world": config.world_model,
             "verifier": config.verifier_model or config.world_model,
             "repair": config.repair_model or config.synth_model or ""}
    with open_session(config, roles, console) as session:
        if not (config.skip_preflight or config.replay):  # the first agent was checked with the other roles
            from occubench.engine.models import preflight

            agent = session.models["agent"]
            for name in config.agent_model[1:]:
                preflight({"agent": Model(agent.client, name, agent.params, "agent")},
                          {"agent": config.endpoint("agent")}, config.retry_budget, console)
        repairer = Engine(session.models["repair"], session.engine.store, session.engine.stats, session.engine.lock,
                          session.engine.redactor)
        candidates = candidates_of(session, config, scenarios_of(session, config))
        worlds = twins(config)
        for round_ in range(config.repair_rounds + 1):
            gate([c for c in candidates if c.status == "pending"], worlds, config, session.models)
            todo = [c for c in candidates if c.status == "pending"]
            if not todo:
                break
            calibrate(session, config, todo, round_)
            for candidate in todo:
                classify(candidate, config)
            if round_ < config.repair_rounds:
                broken = [c for c in todo if c.status == "unsolvable"]
                with ThreadPoolExecutor(config.max_concurrency) as pool:
                    list(pool.map(lambda c: _repair(session, repairer, c), broken))
        for candidate in candidates:
            if candidate.status == "unsolvable" and candidate.repairs:
                candidate.reason += f" after {len(candidate.repairs)} repair(s)"
        report = SynthesisReport.of(session, config, candidates)
        write_output(Path(config.out), session, candidates, report)
    return report
