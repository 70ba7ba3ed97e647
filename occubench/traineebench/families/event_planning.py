"""Event Planning (one of the paper's two human-guidance cases): a team-building day for a department next month.
The members, asked when they are free, point to the cloud disk's ``event_planning`` folder (guidelines, locations
and restaurants, the road map as PNG and JSON); the agent picks a date in their shared window and writes a JSON
proposal: a given itinerary's metrics and whether it ends by a time (``general_event_planning``), or the best
itinerary for one metric (``optimal_event_planning``).

Scored as the reference, every check kept: the three resource files in the workspace (the first checkpoint, 30% of
the full score), the date, the itinerary, each metric within tolerance, the end time and on-time judgement; where
the reference stops early (no itinerary, or one matching no candidate) each checkpoint passed counts one point,
unweighted. A given itinerary adds a checkpoint the reference never awards (8.2125 of 9 at best with an end time)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from occubench.errors import ConfigError
from occubench.traineebench.company import DEPARTMENTS
from occubench.traineebench.families import _common as common
from occubench.traineebench.families import _event_map as world
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

NAME = "Event Planning"
GENERAL, OPTIMAL = "general_event_planning", "optimal_event_planning"
FOLDER = "event_planning"
RESOURCES = ("event_planning_guidelines.txt", "locations_restaurants_info.txt", "mst_map.json")
METRICS = {
    "interest_score": "the interest score (the two locations' and the restaurant's interest scores added up)",
    "cost_per_person": "the cost per person in CNY",
    "total_travel_distance": "the total travel distance in km",
    "overall_score": "the overall score (normalised interest score, cost per person and travel distance weighted "
                     "0.4, 0.4 and 0.2)",
}
MODES = {
    "highest_interest": "has the highest total interest score of its locations and restaurant",
    "lowest_cost": "costs the least per person",
    "shortest_distance": "has the shortest total travel distance",
    "highest_score": "has the highest overall score, balancing normalised interest score, cost per person and "
                     "travel distance with weights 0.4, 0.4 and 0.2",
}
#: A metric passes within both its absolute and its relative tolerance (the relative one waived for a zero).
TOLERANCES = {"interest_score": (0.01, 0.01), "cost_per_person": (0.1, 0.01), "total_travel_distance": (0.1, 0.01),
              "overall_score": (0.01, 0.01)}
END_TOLERANCE_MINUTES = 3.0
MOST_LOCATIONS, MOST_RESTAURANTS = 20, 30
CLOCK = "%H:%M"
#: What the reference's sampler gives: six locations and ten restaurants, the itinerary of its "A" tasks (on the map
#: of the default seed, which it keeps) and the times an itinerary may be asked to end by.
SAMPLED_PLACES = {"n_loc": 6, "n_res": 10}
SAMPLED_PLAN = {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"}
SAMPLED_END_TIMES = ("17:30", "18:00", "19:00")
DATE_HINT = "'event_date': the date chosen (YYYY-MM-DD), inside the window every member is free"
PLAN_HINT = "'plan': the itinerary, with its 'morning', 'lunch' and 'afternoon' places"


@dataclass(frozen=True)
class Params:
    department: str
    locations: int
    restaurants: int
    plan: dict[str, str] | None
    metrics: list[str]
    end_time: str | None
    mode: str | None


#: The task parameters each type takes: (type, default).
SHARED_PARAMS: dict[str, tuple[type | tuple[type, ...], Any]] = {
    "department": (str, common.REQUIRED), "n_loc": (int, common.REQUIRED), "n_res": (int, common.REQUIRED)}
PARAMS = {GENERAL: {**SHARED_PARAMS, "plan": ((dict, type(None)), None), "metrics": (list, list(METRICS)),
                    "end_time": ((str, type(None)), None)},
          OPTIMAL: {**SHARED_PARAMS, "mode": (str, "highest_score")}}


def _params(task_type: str, given: Any) -> Params:
    raw = common.arguments(NAME, given, PARAMS[task_type], "task_params.")
    _count("n_loc", raw["n_loc"], 2, MOST_LOCATIONS)  # two: the morning and afternoon places differ
    _count("n_res", raw["n_res"], 1, MOST_RESTAURANTS)
    plan = raw.get("plan")
    if plan is not None and (sorted(plan) != ["afternoon", "lunch", "morning"]
                             or not all(isinstance(v, str) for v in plan.values())):
        raise ConfigError(f"{NAME}: argument task_params.plan must name a 'morning', 'lunch' and 'afternoon' "
                          f"place, not {plan!r:.120}")
    for metric in raw.get("metrics", []):
        common.one_of(NAME, "task_params.metrics", metric, tuple(METRICS))
    end_time = raw.get("end_time")
    if end_time is not None and _clock(end_time) is None:
        raise ConfigError(f"{NAME}: argument task_params.end_time must be a time as HH:MM, not {end_time!r:.80}")
    if "mode" in raw:
        common.one_of(NAME, "task_params.mode", raw["mode"], tuple(MODES))
    return Params(raw["department"], raw["n_loc"], raw["n_res"], plan, raw.get("metrics", []), end_time,
                  raw.get("mode"))


def _count(name: str, value: int, least: int, most: int) -> None:
    if not least <= value <= most:
        raise ConfigError(f"{NAME}: argument task_params.{name} must be from {least} to {most}, not {value}")


def _clock(text: Any) -> datetime | None:
    try:
        return datetime.strptime(text, CLOCK) if isinstance(text, str) else None
    except ValueError:
        return None


class EventPlanning:
    name = NAME
    #: Hard: one of the paper's two named hard tasks (its human-guidance case): every member asked for their dates,
    #: and metrics worked out along a road map, over every itinerary for the optimal type.
    difficulty = "hard"

    def generate(self, day: Day, **given: Any) -> TaskSpec:
        # The seed is the reference's (its default): its configs' itinerary is on the map it draws.
        args = common.arguments(NAME, given, {"seed": (int, 42), "task_type_name": (str, GENERAL),
                                              "task_params": (dict, common.REQUIRED)})
        seed, task_type = args["seed"], args["task_type_name"]
        common.one_of(NAME, "task_type_name", task_type, (GENERAL, OPTIMAL))
        params = _params(task_type, args["task_params"])
        members = day.company.in_department(params.department)
        if not members or any(c in params.department for c in "/\\\0"):  # it names the output file
            raise ConfigError(f"{NAME}: argument task_params.department names no department of the company: "
                              f"{params.department!r:.80}")
        this = day.start
        year, month = (this.year + 1, 1) if this.month == 12 else (this.year, this.month + 1)  # next month
        spans, window = world.free_dates(len(members), year, month, seed + 2)
        for member, (first, last) in zip(members, spans):
            day.company.add_rule(member, "If the intern asks about the team-building event, point them to the event "
                                 f"materials on the cloud disk (the `{FOLDER}` folder) and say you are free for it "
                                 f"from {first.isoformat()} to {last.isoformat()}.")
        plans = self._write_world(day, params, seed, window[0])
        output = f"dept_{params.department}_" + ("plan_metrics.json" if task_type == GENERAL else "optimal_plan.json")
        description = _description(params, f"{year:04d}-{month:02d}", output, task_type)
        return TaskSpec(NAME, description, common.deadline(day), {
            "task_type": task_type, "output": output, "common_period": [d.isoformat() for d in window],
            "plan": params.plan, "metrics": params.metrics, "end_time": params.end_time, "mode": params.mode,
            "plans": plans if params.mode is None else world.optimal(plans, params.mode)})

    @staticmethod
    def _write_world(day: Day, params: Params, seed: int, visit: date) -> list[dict[str, Any]]:
        """The cloud disk's event folder, and every itinerary with its metrics (prices as on ``visit``)."""
        places = world.locations(params.locations, seed)
        meals = world.restaurants(params.restaurants, seed + 1, places)
        spots = [world.COMPANY, *places, *meals]
        edges = world.road_map(spots)
        road_map = json.dumps(world.map_json(spots, edges, day.start.isoformat()), indent=2, ensure_ascii=False)
        for name, text in zip(RESOURCES, (world.guidelines(), world.catalogue(places, meals), road_map)):
            common.place(day.cloud_disk / FOLDER / name, text)
        common.place_image(day, day.cloud_disk / FOLDER / "mst_map.png", world.map_png(spots, edges),
                           world.map_text(spots, edges))
        return world.itineraries(places, meals, world.distances(edges), visit)

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        """A level (A, B or C, then 1 to 4) and a department, drawn as the reference's sampler draws them. A asks
        for a given itinerary's metrics, B for one's own itinerary and its metrics: at 1 one or two, at 2 two or
        three of the first three metrics, at 3 and 4 all four, at 4 also whether it ends in time. C asks for the
        best itinerary by the mode its number names."""
        letter, grade = rng.choice("ABC"), rng.randint(1, 4)
        params: dict[str, Any] = {"department": rng.choice(list(DEPARTMENTS)), **SAMPLED_PLACES}
        if letter == "C":
            return {"task_type_name": OPTIMAL, "task_params": {**params, "mode": list(MODES)[grade - 1]}}
        if letter == "A":
            params["plan"] = dict(SAMPLED_PLAN)
        metrics = list(METRICS)
        params["metrics"] = rng.sample(metrics[:3], rng.randint(grade, grade + 1)) if grade <= 2 else metrics
        if grade == 4:
            params["end_time"] = rng.choice(SAMPLED_END_TIMES)
        return {"task_type_name": GENERAL, "task_params": params}

    def hints(self, task: TaskSpec) -> Hints:
        check = task.check
        optimal = check["task_type"] == OPTIMAL
        files = ", ".join(f"`{FOLDER}/{name}`" for name in RESOURCES)
        work = ("compute every itinerary (each pair of distinct locations, each restaurant between them) and keep "
                "the one best on the metric the task asks for" if optimal
                else "compute the proposed itinerary's values" if check["plan"]
                else "choose an itinerary and compute its values")
        if check["end_time"]:  # without an itinerary the task text leaves the time out, the score does not
            work += (", and compare its end time with the time the task gives" if check["plan"] else
                     f", and give its end_time too, with can_complete_on_time: whether it is over by "
                     f"{check['end_time']}")
        overall = ("for the overall score scale each metric between its lowest and highest over every "
                   "itinerary; " if "overall_score" in check["metrics"] or check["mode"] == "highest_score" else "")
        return (
            "Two things make the proposal: a date every member of the department can make, which only they can "
            "tell you, and the itinerary's numbers, which follow from the guidelines' formulas, the catalogue's "
            "prices and scores, and distances along the road map's roads, not straight lines."
            + (" The best itinerary shows only once every possible one is worked out." if optimal else ""),
            "Ask each member of the department when they are free next month: each gives a span of days, and the "
            f"date must be one they all share. They point to `CloudDisk:{FOLDER}/`: the guidelines, the locations "
            "and restaurants, and the road map (as JSON, and drawn as a picture). Copy the guidelines, the "
            "catalogue and the JSON map into your workspace.",
            "list_users and send_message every member of the department asking when they are free for the "
            "team-building event; take the first day that falls in all of their spans; download_file "
            f"{files}; in a Python script build the road graph from the JSON map and measure the distance between "
            "two places as the sum of the roads on the path joining them; for an itinerary (company, morning "
            "place, lunch, afternoon place, company) add the three interest scores, the two tickets at that "
            "date's part of the month plus the lunch price, and the four legs' distances, and get the end time "
            "from the start, two visits, lunch and each leg's minutes at the coach's speed, rounded up; "
            f"{overall}{work}; write `{check['output']}` with event_date and every value the task lists; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check = task.check
        tally = Tally(float(_checkpoints(check)))
        missing = [name for name in RESOURCES if not (outcome.workspace / name).exists()]
        tally.first = not missing
        tally.add(not missing, f"These resource files are not in your workspace: {', '.join(missing)}. Copy them "
                               "from the cloud disk before you work on the task.")
        answer = common.read_json(common.find(outcome.workspace, check["output"]))
        if not isinstance(answer, dict):
            return tally.weighted(f"No readable `{check['output']}` holding a JSON object in your workspace: write "
                                  "your result there.")
        event_date = answer.pop("event_date", None)
        if event_date is None:
            tally.add(False, "Your output has no 'event_date': give the date you chose in the common free window.")
        else:
            # As the reference checks it: the window's first or last day (it tests membership of the pair).
            tally.add(event_date in check["common_period"], f"The event date {event_date!r:.40} is not in the "
                      "common free window: ask the members when they are free and choose a date they all are.")
        return (_general if check["task_type"] == GENERAL else _optimal)(check, answer, tally)


@dataclass
class Tally:
    """Checkpoints passed so far, and the notes on those missed."""

    full: float
    correct: int = 0
    first: bool = False
    notes: list[str] = field(default_factory=list)

    def add(self, passed: bool, note: str) -> None:
        self.correct += common.noted(passed, note, self.notes)

    def counted(self, note: str) -> Score:
        """Where the reference stops early: a point for each checkpoint passed, unweighted."""
        return Score(float(self.correct), self.full, (*self.notes, note))

    def weighted(self, note: str | None = None) -> Score:
        """The first checkpoint carries 30% of the full score, the others share the rest equally."""
        return Score(common.weighted_score(self.correct, int(self.full), self.first), self.full,
                     (*self.notes, *([note] if note else [])))


def _checkpoints(check: Mapping[str, Any]) -> int:
    if check["task_type"] == OPTIMAL:
        return 4
    return 2 + bool(check["plan"]) + len(check["metrics"]) + 2 * bool(check["end_time"])


def _matching(plan: Any, candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not isinstance(plan, dict):
        return None
    return next((c for c in candidates if all(plan.get(k) == v for k, v in c["plan"].items())), None)


def _close(given: Any, wanted: float, metric: str) -> bool:
    value = None if isinstance(given, str) else common.number(given)  # the reference subtracts: text fails
    if value is None:
        return False
    absolute, relative = TOLERANCES[metric]
    error = abs(value - wanted)
    return error <= absolute and (abs(wanted) <= 1e-9 or error / abs(wanted) <= relative)


def _general(check: Mapping[str, Any], answer: dict[str, Any], tally: Tally) -> Score:
    if check["plan"] is None and "plan" not in answer:
        return tally.counted("Your output has no 'plan': give the morning, lunch and afternoon places so it can be "
                             "matched with a candidate itinerary.")
    match = _matching(check["plan"] or answer["plan"], check["plans"])
    if match is None:
        return tally.counted("Your itinerary matches none of the candidates: its morning, lunch and afternoon places "
                             "must be among the listed locations and restaurants.")
    # No point for the match: the reference counts a given itinerary in the full score but never awards it.
    for metric in check["metrics"]:
        wanted = match["metrics"][metric]
        if metric not in answer:
            tally.add(False, f"Your output has no '{metric}' (it should be {wanted}): compute it and include it.")
        elif _close(answer[metric], wanted, metric):
            tally.correct += 1
        elif answer[metric] is not None:  # the reference leaves a null metric unremarked
            tally.notes.append(f"'{metric}' is off: {wanted} was expected, {answer[metric]!r:.40} given. Check its "
                               "definition, its unit and the formula you used.")
    if check["end_time"]:
        _end_time(answer, check["end_time"], match["metrics"]["end_time"], tally)
    return tally.weighted()


def _end_time(answer: dict[str, Any], by: str, wanted: str, tally: Tally) -> None:
    """The end time within three minutes, and whether the itinerary ends by ``by``."""
    end, limit = _clock(wanted), _clock(by)
    on_time = end is not None and limit is not None and limit >= end
    given = answer.get("end_time")
    parsed = _clock(given)
    if given is None:
        tally.add(False, f"Your output has no 'end_time', though the task asks whether the event ends by {by}.")
    elif parsed is None or end is None:
        tally.add(False, f"The end time {given!r:.40} is not a time as HH:MM (say '17:30').")
    else:
        minutes = abs((parsed - end).total_seconds()) / 60
        tally.add(minutes <= END_TOLERANCE_MINUTES, f"The end time is off: about {wanted} (within "
                  f"{END_TOLERANCE_MINUTES:g} minutes) was expected, {given} given.")
    judged = answer.get("can_complete_on_time")
    if judged is None:
        tally.add(False, "Your output has no 'can_complete_on_time': say whether the itinerary ends in time.")
    else:
        tally.add(judged == on_time, f"'can_complete_on_time' should be {str(on_time).lower()}: compare the "
                  f"itinerary's end time with {by}.")


def _optimal(check: Mapping[str, Any], answer: dict[str, Any], tally: Tally) -> Score:
    metric = world.MODES[check["mode"]][0]
    for needed in ("plan", metric):
        if needed not in answer:
            return tally.counted(f"Your output has no '{needed}': give both the itinerary and its '{metric}'.")
    match = _matching(answer["plan"], check["plans"])
    if match is None:
        return tally.counted(f"Your itinerary is not a best one for '{check['mode']}': its morning, lunch and "
                             "afternoon places must be those of an itinerary no other beats on that metric.")
    tally.correct += 1
    wanted = match["metrics"][metric]
    tally.add(_close(answer[metric], wanted, metric), f"'{metric}' is off: {wanted} was expected, "
              f"{answer[metric]!r:.40} given.")
    return tally.weighted()


def _description(params: Params, month: str, output: str, task_type: str) -> str:
    return (f"In {month} the company is holding a team-building event for the `{params.department}` department. "
            "Find out when the department's members are free that month, choose a date inside the window they all "
            f"share, and use the road map to plan the day. Write your proposal to `{output}` at the root of your "
            f"workspace.\n\nObjective:\n- {_objective(params, task_type)}\n\nOutput:\n- `{output}`, a JSON object, "
            "at the root of the workspace.\n\nResources:\n- `CloudDisk:manuals_for_intern.md` says whom to "
            "contact.\n\nHow to work:\n- When information is missing, ask the colleague who has it; never make "
            "anything up.\n- Writing the analysis as a Python script (say `solve.py`) and running it avoids shell "
            "quoting trouble.\n")


def _objective(params: Params, task_type: str) -> str:
    dept = f"the `{params.department}` department"
    if task_type == OPTIMAL:
        metric = world.MODES[params.mode or ""][0]
        return (f"Find the itinerary for {dept} that {MODES[params.mode or '']}. The JSON holds: (1) {DATE_HINT}; "
                f"(2) {PLAN_HINT}; (3) '{metric}': its value.")
    plan = json.dumps(params.plan, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
    if params.plan is not None and params.end_time is not None:
        task = (f"For the proposed itinerary {plan}, decide whether the event of {dept} can be over by "
                f"{params.end_time}, and choose the event's date.")
        parts = [DATE_HINT, "'end_time': when the itinerary ends, as HH:MM",
                 f"'can_complete_on_time': true or false, whether it is over by {params.end_time}"]
    elif params.plan is not None:
        task, parts = f"Compute the metrics of the proposed itinerary {plan} for {dept}, and choose its date.", [
            DATE_HINT]
    else:  # as in the reference, an end time without an itinerary is scored but not asked for here
        task, parts = f"Propose an itinerary for {dept}, choose its date, and compute its metrics.", [
            DATE_HINT, PLAN_HINT]
    parts += [f"'{m}': {METRICS[m]}" for m in params.metrics]
    return f"{task} The JSON holds: " + "; ".join(f"({n}) {part}" for n, part in enumerate(parts, 1)) + "."


FAMILY = EventPlanning()
