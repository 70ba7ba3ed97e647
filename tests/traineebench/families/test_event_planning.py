"""Event Planning: the reference's world drawn from its seed (its configs' itinerary is on the seed-42 map), the
cloud disk's four files, the members' free dates, and the reference's scoring kept check for check: the resource
files (30% of the full score), the date, the itinerary, each metric, the end time and the on-time judgement; the
unweighted count where the reference stops early.

The scripted agent below works only from what the agent gets: the members' replies (the reply rules), the road
map's JSON and the locations file; that it earns the full score shows the files carry what the checks need."""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from occubench.errors import ConfigError
from occubench.traineebench.families import _event_map as world
from occubench.traineebench.families.event_planning import FAMILY, RESOURCES
from occubench.traineebench.family import Day, Employee, Outcome, TaskSpec
from tests.traineebench.conftest import make_day
from tests.traineebench.families.outputs import hostile, reread

SAMPLE_PLAN = {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"}
ALL_METRICS = ["interest_score", "cost_per_person", "total_travel_distance", "overall_score"]
GIVEN = {"task_type_name": "general_event_planning",  # a config of the reference's, as it gives it
         "task_params": {"department": "Engineering", "n_loc": 6, "n_res": 10, "plan": SAMPLE_PLAN,
                         "metrics": ALL_METRICS, "end_time": "17:30"}}
OPEN = {"task_type_name": "general_event_planning",
        "task_params": {"department": "Engineering", "n_loc": 6, "n_res": 10,
                        "metrics": ["cost_per_person", "interest_score"]}}
SPAN = re.compile(r"free for it from (\S+) to (\S+)\.")


def optimal_args(mode: str) -> dict[str, Any]:
    return {"task_type_name": "optimal_event_planning",
            "task_params": {"department": "Engineering", "n_loc": 6, "n_res": 10, "mode": mode}}


class Agent:
    """What an agent works out from its day: the date everyone is free, and every itinerary's metrics."""

    def __init__(self, day: Day, department: str = "Engineering") -> None:
        spans = [SPAN.search(r).groups() for e in day.company.in_department(department)  # type: ignore[union-attr]
                 for r in day.company.rules[e.name] if SPAN.search(r)]
        self.date = max(first for first, _ in spans)
        folder = day.cloud_disk / "event_planning"
        graph = json.loads((folder / "mst_map.json").read_text(encoding="utf-8"))
        nodes = [n["id"] for n in graph["nodes"]]
        self.km = {a: {b: 0.0 if a == b else math.inf for b in nodes} for a in nodes}
        for edge in graph["edges"]:
            self.km[edge["u"]][edge["v"]] = self.km[edge["v"]][edge["u"]] = edge["distance_km"]
        for via, a, b in itertools.product(nodes, repeat=3):  # Floyd-Warshall: the roads' shortest distances
            self.km[a][b] = min(self.km[a][b], self.km[a][via] + self.km[via][b])
        self.spots = self._catalogue((folder / "locations_restaurants_info.txt").read_text(encoding="utf-8"))
        self.plans = [self._metrics(a, r, b) for a, b in itertools.permutations(
            [n for n, s in self.spots.items() if s["kind"] == "loc"], 2) for r in
            [n for n, s in self.spots.items() if s["kind"] == "res"]]
        for metric, lower in (("cost_per_person", True), ("interest_score", False),
                              ("total_travel_distance", True)):
            values = [p[metric] for p in self.plans]
            low, high = min(values), max(values)
            for plan in self.plans:
                share = (plan[metric] - low) / (high - low)
                plan.setdefault("parts", []).append(1 - share if lower else share)
        for plan in self.plans:
            plan["overall_score"] = 0.4 * plan["parts"][0] + 0.4 * plan["parts"][1] + 0.2 * plan["parts"][2]

    def _catalogue(self, text: str) -> dict[str, dict[str, Any]]:
        spots = {}
        _, places, meals = re.split(r"\n(?:Locations|Restaurants)\n", text)
        for kind, part in (("loc", places), ("res", meals)):
            for block in re.split(r"\n(?=\d+\. )", part.strip()):
                name = re.match(r"\d+\. (.+)", block).group(1)  # type: ignore[union-attr]
                prices = [float(p) for p in re.findall(r"¥([\d.]+)", block.split("About:")[0])]
                day = int(self.date[-2:])
                price = prices[0 if day <= 10 else 1 if day <= 20 else 2] if len(prices) == 3 else sum(prices)
                interest = float(re.search(r"Interest score: ([\d.]+)", block).group(1))  # type: ignore[union-attr]
                spots[name] = {"kind": kind, "price": price, "interest": interest}
        return spots

    def _metrics(self, morning: str, lunch: str, afternoon: str) -> dict[str, Any]:
        stops = ["company:KnowledgeX", f"loc:{morning}", f"res:{lunch}", f"loc:{afternoon}", "company:KnowledgeX"]
        legs = [self.km[a][b] for a, b in zip(stops, stops[1:])]
        back = 9 * 60 + 120 + 90 + 120 + sum(math.ceil(km / 30 * 60) for km in legs)
        visited = [self.spots[morning], self.spots[lunch], self.spots[afternoon]]
        return {"plan": {"morning": morning, "lunch": lunch, "afternoon": afternoon},
                "interest_score": sum(s["interest"] for s in visited),
                "cost_per_person": sum(s["price"] for s in visited), "total_travel_distance": sum(legs),
                "end_time": f"{back // 60:02d}:{back % 60:02d}"}

    def answer(self, plan: dict[str, str], by: str | None = None) -> dict[str, Any]:
        found = next(p for p in self.plans if p["plan"] == plan)
        answer = {"event_date": self.date, **{k: v for k, v in found.items() if k != "parts"}}
        if by is not None:
            answer["can_complete_on_time"] = by >= found["end_time"]
        return answer

    def best(self, metric: str, more: bool) -> dict[str, Any]:
        return self.answer((max if more else min)(self.plans, key=lambda p: p[metric])["plan"])


def play(day: Day, task: TaskSpec, answer: Any = None, copy: bool = True, raw: str | None = None,
         where: str = "") -> Outcome:
    if copy:
        for name in RESOURCES:
            shutil.copy(day.cloud_disk / "event_planning" / name, day.workspace / name)
    if answer is not None or raw is not None:
        path = day.workspace / where / task.check["output"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(raw if raw is not None else json.dumps(answer, ensure_ascii=False), encoding="utf-8")
    return Outcome(day.workspace)


def test_the_reference_seed_draws_the_map_its_configs_name(day: Day) -> None:
    task = FAMILY.generate(day, **GIVEN)
    places = world.locations(6, 42)
    assert {"Riverside Wetland", "Stonegate Eco Park"} <= {p.name for p in places}
    assert "Maple · Hotpot" in {r.name for r in world.restaurants(10, 43, places)}
    assert FAMILY.name == task.family == "Event Planning" and "2025-11" in task.description
    assert task.check["output"] == "dept_Engineering_plan_metrics.json" and len(task.check["plans"]) == 6 * 5 * 10
    assert sorted(p.name for p in (day.cloud_disk / "event_planning").iterdir()) == [
        "event_planning_guidelines.txt", "locations_restaurants_info.txt", "mst_map.json", "mst_map.png"]
    assert (day.cloud_disk / "event_planning/mst_map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    members = day.company.in_department("Engineering")
    assert all(len(day.company.rules[e.name]) == 1 and SPAN.search(day.company.rules[e.name][0]) for e in members)


def test_the_road_map_is_a_minimum_spanning_tree() -> None:
    places = world.locations(9, 5)
    spots = [world.COMPANY, *places, *world.restaurants(12, 6, places)]
    edges = world.road_map(spots)
    road = world.distances(edges)
    assert len(edges) == len(spots) - 1 and all(len(reached) == len(spots) for reached in road.values())
    length = {frozenset((a.node, b.node)): km for a, b, km in edges}
    neighbours: dict[str, list[str]] = {}
    for a, b, _ in edges:
        neighbours.setdefault(a.node, []).append(b.node)
        neighbours.setdefault(b.node, []).append(a.node)
    for a in spots:
        parent, pending = {a.node: a.node}, [a.node]
        while pending:
            node = pending.pop()
            for other in neighbours[node]:
                if other not in parent:
                    parent[other] = node
                    pending.append(other)
        for b in spots:
            path, node = [], b.node
            while node != a.node:
                path.append(length[frozenset((node, parent[node]))])
                node = parent[node]
            # The cycle property: a pair off the tree is no closer than the longest road on its tree path.
            assert not path or world.haversine(a, b) >= max(path) - 1e-9
            assert road[a.node][b.node] == pytest.approx(sum(path))


def test_free_dates_cover_a_common_window_inside_a_third_of_the_month() -> None:
    for seed in range(60):
        spans, (first, last) = world.free_dates(8, 2026, 2, seed)
        third = {1: (1, 10), 11: (11, 20), 21: (21, 28)}[1 if first.day <= 10 else 11 if first.day <= 20 else 21]
        assert 1 <= (last - first).days + 1 <= 3
        assert all(date(2026, 2, third[0]) <= a <= first and last <= b <= date(2026, 2, third[1]) for a, b in spans)


def test_the_given_itinerary_tops_out_below_the_full_score_as_in_the_reference(day: Day) -> None:
    """The reference counts a given itinerary as a checkpoint of the full score and never awards it: every other
    checkpoint passed earns 30% of 9 plus 7 of its 8 other shares."""
    task = FAMILY.generate(day, **GIVEN)
    done = play(day, task, Agent(day).answer(SAMPLE_PLAN, "17:30"))
    score = FAMILY.evaluate(task, done)
    assert (score.points, score.full, score.notes) == (8.2125, 9.0, ()) and FAMILY.evaluate(reread(task), done) == score
    without_end = {**GIVEN, "task_params": {k: v for k, v in GIVEN["task_params"].items() if k != "end_time"}}
    task = FAMILY.generate(make_day(day.workspace.parent / "again"), **without_end)
    assert FAMILY.evaluate(task, play(day, task, Agent(day).answer(SAMPLE_PLAN))).points == pytest.approx(
        2.1 + 5 * 4.9 / 6)  # of 7: the resources, the date and four metrics


def test_an_itinerary_of_ones_own_earns_four_of_four(day: Day) -> None:
    task = FAMILY.generate(day, **OPEN)
    agent = Agent(day)
    score = FAMILY.evaluate(task, play(day, task, agent.answer(agent.plans[17]["plan"]), where="out/deeper"))
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ())  # found below the workspace's root too


@pytest.mark.parametrize("mode", list(world.MODES))
def test_the_best_itinerary_for_each_mode_earns_four_of_four(day: Day, mode: str) -> None:
    task = FAMILY.generate(day, **optimal_args(mode))
    metric, more = world.MODES[mode]
    score = FAMILY.evaluate(task, play(day, task, Agent(day).best(metric, more)))
    assert (score.points, score.full, score.notes) == (4.0, 4.0, ())


def test_each_checkpoint_of_the_given_itinerary_earns_its_share(day: Day) -> None:
    task = FAMILY.generate(day, **GIVEN)
    right = Agent(day).answer(SAMPLE_PLAN, "17:30")
    share = 0.7 * 9 / 8  # each checkpoint after the first, of the full 9
    # (answer, resources copied, checkpoints passed after the first)
    cases: list[tuple[dict[str, Any] | None, bool, int]] = [
        (None, False, 0),                                     # nothing at all
        (None, True, 0),                                      # the resource files alone: 30% of 9
        ({"event_date": right["event_date"]}, True, 1),       # and the date (the itinerary is the given one)
        ({k: v for k, v in right.items() if k != "event_date"}, True, 6),
        (right, True, 7),
        ({**right, "cost_per_person": right["cost_per_person"] + 0.09}, True, 7),  # within 0.1
        ({**right, "cost_per_person": right["cost_per_person"] + 0.2}, True, 6),
        ({**right, "overall_score": None}, True, 6),
        ({**right, "end_time": "17:35"}, True, 6),            # four minutes off 17:31
        ({**right, "end_time": "17:28"}, True, 7),            # three
        ({**right, "can_complete_on_time": not right["can_complete_on_time"]}, True, 6),
        ({**right, "end_time": "half past five"}, False, 6),  # the rest counts without the first checkpoint
    ]
    for answer, copy, passed in cases:
        for name in RESOURCES:
            (day.workspace / name).unlink(missing_ok=True)
        (day.workspace / task.check["output"]).unlink(missing_ok=True)
        score = FAMILY.evaluate(task, play(day, task, answer, copy))
        assert (score.points, score.full) == (round(2.7 * copy + passed * share, 6), 9.0), answer
        silent = answer is not None and "overall_score" in answer and answer["overall_score"] is None
        assert bool(score.notes) == (passed + copy < 8 and not silent)  # a null metric goes unremarked there


def test_where_the_reference_stops_early_passed_checkpoints_count_one_each(day: Day, tmp_path: Path) -> None:
    task = FAMILY.generate(day, **OPEN)
    agent = Agent(day)
    no_plan = FAMILY.evaluate(task, play(day, task, {"event_date": agent.date, "cost_per_person": 1}))
    assert (no_plan.points, no_plan.full) == (2.0, 4.0) and "no 'plan'" in no_plan.notes[-1]
    unknown = {**agent.answer(agent.plans[0]["plan"]), "plan": {**SAMPLE_PLAN, "lunch": "Nowhere"}}
    assert FAMILY.evaluate(task, play(day, task, unknown)).points == 2.0
    other = make_day(tmp_path / "optimal")
    task = FAMILY.generate(other, **optimal_args("lowest_cost"))
    worst = Agent(other).best("cost_per_person", True)
    assert FAMILY.evaluate(task, play(other, task, worst)).points == 2.0
    off = {**Agent(other).best("cost_per_person", False), "cost_per_person": 1000}
    assert FAMILY.evaluate(task, play(other, task, off)).points == pytest.approx(1.2 + 2 * 2.8 / 3)


def test_the_date_counts_as_the_reference_checks_it(day: Day) -> None:
    task = FAMILY.generate(day, **OPEN)
    agent = Agent(day)
    first, last = task.check["common_period"]
    assert first == agent.date  # the three members' replies pin the window down
    answer = agent.answer(agent.plans[3]["plan"])
    for chosen, points in ((first, 4.0), (last, 4.0), ("2025-11-13", 1.2 + 2 * 2.8 / 3), ("13 Nov", 1.2 + 2 * 2.8 / 3)):
        score = FAMILY.evaluate(task, play(day, task, {**answer, "event_date": chosen}))
        assert score.points == pytest.approx(points)  # the reference takes the window's two ends only


@pytest.mark.parametrize("raw", [
    '{"event_date": NaN, "plan": [1], "cost_per_person": Infinity, "interest_score": true}',
    '{"plan": {"morning": {"a": 1}}, "cost_per_person": "90", "event_date": ["2025-11-12"]}',
    '["a list"]', '"text"', "null", "{" * 100_000, "not json at all", " " * (20 << 20),
    '{"event_date": "2025-11-12", "plan": "x" , "interest_score": 1' + "0" * 5000 + "}",
])
def test_hostile_outputs_score_without_a_crash(three_tasks: tuple[Day, list[TaskSpec]], raw: str) -> None:
    day, tasks = three_tasks
    for task in tasks:
        score = FAMILY.evaluate(task, play(day, task, raw=raw))
        assert 0 <= score.points < score.full


@pytest.mark.parametrize("shape", sorted(hostile(b"")))
def test_hostile_files_in_the_outputs_place_are_read_as_no_output(three_tasks: tuple[Day, list[TaskSpec]],
                                                                  shape: str) -> None:
    day, tasks = three_tasks
    for task in tasks:
        path = day.workspace / task.check["output"]
        if path.is_dir():
            path.rmdir()
        path.unlink(missing_ok=True)
        right = json.dumps({"event_date": task.check["common_period"][0], "plan": task.check["plans"][0]["plan"]})
        outcome = play(day, task)  # the resource files copied, then no output but this
        hostile(right.encode())[shape](path)
        score = FAMILY.evaluate(task, outcome)
        assert (score.points, score.notes[-1][:11]) == (round(0.3 * score.full, 6), "No readable")


@pytest.fixture(scope="module")
def three_tasks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Day, list[TaskSpec]]:
    """One of each kind, generated once for the hostile outputs (each writes its own output file)."""
    day = make_day(tmp_path_factory.mktemp("hostile"))
    return day, [FAMILY.generate(day, **args) for args in (GIVEN, OPEN, optimal_args("highest_score"))]


@pytest.mark.parametrize(("change", "argument"), [
    ({"task_type_name": "party_planning"}, "task_type_name"),
    ({"task_params": None}, "task_params"),
    ({"task_params": "Engineering"}, "task_params"),
    ({"seed": "42"}, "seed"),
    ({"difficulty": "hard"}, "difficulty"),
    ({"task_params": {"n_loc": 6, "n_res": 10}}, "task_params.department"),
    ({"task_params": {**GIVEN["task_params"], "department": "Catering"}}, "task_params.department"),
    ({"task_params": {**GIVEN["task_params"], "n_loc": 1}}, "task_params.n_loc"),
    ({"task_params": {**GIVEN["task_params"], "n_loc": 21}}, "task_params.n_loc"),
    ({"task_params": {**GIVEN["task_params"], "n_res": 0}}, "task_params.n_res"),
    ({"task_params": {**GIVEN["task_params"], "n_res": "10"}}, "task_params.n_res"),
    ({"task_params": {**GIVEN["task_params"], "plan": {"morning": "Riverside Wetland"}}}, "task_params.plan"),
    ({"task_params": {**GIVEN["task_params"], "metrics": ["fun"]}}, "task_params.metrics"),
    ({"task_params": {**GIVEN["task_params"], "metrics": "cost_per_person"}}, "task_params.metrics"),
    ({"task_params": {**GIVEN["task_params"], "end_time": "5 pm"}}, "task_params.end_time"),
    ({"task_params": {**GIVEN["task_params"], "mode": "lowest_cost"}}, "task_params.mode"),
    ({"task_type_name": "optimal_event_planning", "task_params": {**optimal_args("x")["task_params"]}},
     "task_params.mode"),
    ({"task_type_name": "optimal_event_planning", "task_params": {**optimal_args("lowest_cost")["task_params"],
                                                                  "plan": SAMPLE_PLAN}}, "task_params.plan"),
])
def test_bad_arguments_are_config_errors_naming_them(day: Day, change: dict[str, Any], argument: str) -> None:
    arguments = {k: v for k, v in {**GIVEN, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=f"argument {re.escape(argument)}"):
        FAMILY.generate(day, **arguments)


def test_a_department_whose_name_is_a_path_is_refused(day: Day) -> None:
    day.company.employees.append(Employee("Rd Lead", "R&D Manager", "../R&D"))  # the output file is named by it
    with pytest.raises(ConfigError, match="argument task_params.department"):
        FAMILY.generate(day, **{**GIVEN, "task_params": {**GIVEN["task_params"], "department": "../R&D"}})


def test_the_same_seed_writes_the_same_files(tmp_path: Path) -> None:
    days = [make_day(tmp_path / name) for name in ("one", "two")]
    tasks = [FAMILY.generate(d, **GIVEN) for d in days]
    files = [{p.name: p.read_bytes() for p in (d.cloud_disk / "event_planning").iterdir()} for d in days]
    assert tasks[0] == tasks[1] and files[0] == files[1] and days[0].company.rules == days[1].company.rules
    reseeded = make_day(tmp_path / "three")
    assert FAMILY.generate(reseeded, **GIVEN, seed=43).check["plans"] != tasks[0].check["plans"]
