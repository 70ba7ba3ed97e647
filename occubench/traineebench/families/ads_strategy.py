"""ADs Strategy Plan: pick the advertising channels (a CSV on the cloud disk: cost, base effect, audience fit, grid
cell) of most effective exposure within a budget, ``base_effect * (0.5 + 0.5 * density / 5) * audience_fit``: a 0/1
knapsack, with each cell's density only in a PNG heatmap the agent must read.

Scored as the reference, full 13: the handbook in the workspace (1), the plan file there (1), its fields (1), only
listed channels (1), the total cost within 1% (2), the total exposure within 5% (2), the optimal set (5). A plan
that is not a JSON value (or an empty one) scores 0 altogether."""

from __future__ import annotations

import io
import math
import random
import re
from typing import Any

from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure

from occubench.traineebench.families import _common as common
from occubench.traineebench.family import Day, Hints, Outcome, Score, TaskSpec

NAME = "ADs Strategy Plan"
FOLDER = "ads_strategy"
HANDBOOK = "ads_strategy_handbook.md"
#: The target group the task names first, and the two others whose heatmaps sit beside it as distractors.
GROUPS = ("college_students_18_25", "young_professionals_25_35", "seniors_60_plus")
#: Each difficulty's budget ($), channels, heatmap side and hotspots, and the ranges of a channel's cost and base
#: effect; all whole numbers.
WHOLE = ("budget", "num_channels", "heatmap_size", "heatmap_centers", "cost_min", "cost_max", "effect_min",
         "effect_max")
PRESETS = {name: dict(zip(WHOLE, values)) for name, values in {
    "very_easy": (7000, 8, 8, 1, 300, 2500, 600, 3000), "easy": (8000, 20, 10, 1, 350, 3200, 700, 3800),
    "medium": (10000, 28, 12, 1, 400, 4000, 800, 5000), "hard": (11000, 32, 15, 2, 450, 4500, 900, 5600),
    "very_hard": (12000, 36, 18, 2, 500, 5000, 1000, 6000)}.items()}
#: The configs write "very easy" and "very hard"; the reference looks those up among the names above, misses, and
#: generates them at medium: so do we.
PRESETS["very easy"] = PRESETS["very hard"] = PRESETS["medium"]
#: What the reference's sampler draws: a city of its preset list, and a difficulty spelt as its configs spell it
#: (so that two of the five are generated at medium there, and here).
CITIES = ("Shanghai", "Beijing", "Guangzhou", "Shenzhen", "Hangzhou", "Chengdu", "Wuhan", "Nanjing", "Chongqing",
          "XiAn")
SAMPLED_DIFFICULTIES = ("very easy", "easy", "medium", "hard", "very hard")
#: Each overridable number's bounds (the knapsack is budget x channels; the heatmap's cells are labelled).
BOUNDS: dict[str, tuple[float, float]] = {
    "budget": (1, 50_000), "num_channels": (1, 100), "heatmap_size": (2, 30), "heatmap_centers": (1, 10),
    "cost_min": (1, 50_000), "cost_max": (1, 50_000), "effect_min": (1, 1_000_000), "effect_max": (1, 1_000_000),
    "heatmap_sigma_min": (0.1, 100), "heatmap_sigma_max": (0.1, 100), "heatmap_min_center_distance": (0, 100),
    "budget_tolerance": (0, 1),
}
#: Relative weights of the channel types in a mix, and how well each type reaches the target group.
MIXES = {"balanced": (1, 1, 1, 1), "metro_focus": (3, 1, 1, 1), "campus_heavy": (1, 1, 1, 3)}
FIT = {"subway": 0.6, "mall_screen": 0.6, "bus_stop": 0.5, "campus_screen": 0.9}
COLUMNS = ("id", "name", "type", "grid_i", "grid_j", "cost", "base_effect", "audience_fit")
#: Density 0 (white) to 5 (deep red).
COLOURS = ("#ffffff", "#fdf0d5", "#fcd29f", "#f9ae86", "#f28482", "#d9645f")
_CITY = re.compile(r"[A-Za-z][A-Za-z' -]{0,40}")

HANDBOOK_TEXT = """# Advertising Strategy Handbook

How a multi-channel advertising plan is worked out, and what it must contain.

## What you have
- Heatmaps of where each target group lives, on the cloud disk as `target_user_density_<group>.png`.
- `channels.csv`: every channel you may buy, with its grid cell (`grid_i`, `grid_j`), `cost`, `base_effect` and
  `audience_fit`.
- The campaign's total budget.

## The goal
Spend no more than the budget and reach the target group as much as possible: maximise the sum of the chosen
channels' effective exposure, where

    effective exposure = base_effect * geo_weight * audience_fit
    geo_weight         = 0.5 + 0.5 * density_weight
    density_weight     = density / 5

and `density` is the number the target group's heatmap shows in the channel's cell: column `grid_i`, row `grid_j`.

## How to go about it
1. Look at the heatmap and find where the target group is dense.
2. Go through the channel list: what each channel costs and how well it covers those areas.
3. Choose the combination that does best within the budget.
"""


def _params(task_params: Any) -> dict[str, Any]:
    if task_params is None:
        task_params = {}
    if not isinstance(task_params, dict):
        raise common.bad_argument(NAME, "task_params", 'an object such as {"city": ..., "difficulty": ...}',
                                  task_params)
    common.known_arguments(f"{NAME} task_params", task_params, {"city", "difficulty", "channel_mix", *BOUNDS})
    difficulty = task_params.get("difficulty", "medium")
    if difficulty not in PRESETS:
        raise common.bad_argument(NAME, "task_params.difficulty", f"one of {', '.join(sorted(PRESETS))}", difficulty)
    city = task_params.get("city", "Shanghai")
    if not isinstance(city, str) or not _CITY.fullmatch(city):
        raise common.bad_argument(NAME, "task_params.city", "a city's name", city)
    mix = task_params.get("channel_mix", "balanced")
    if mix not in MIXES:
        raise common.bad_argument(NAME, "task_params.channel_mix", f"one of {', '.join(MIXES)}", mix)
    params = {**PRESETS[difficulty], "heatmap_sigma_min": 4.0, "heatmap_sigma_max": 10.0, "budget_tolerance": 0.05,
              "heatmap_min_center_distance": None, "city": city, "channel_mix": mix}
    for key, (low, high) in BOUNDS.items():
        value = task_params.get(key, params[key])
        if value is None and key == "heatmap_min_center_distance":
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not low <= value <= high or (key in WHOLE and not isinstance(value, int)):
            kind = "a whole number" if key in WHOLE else "a number"
            raise common.bad_argument(NAME, f"task_params.{key}", f"{kind} from {low:g} to {high:g}", value)
        params[key] = value
    for least, most in (("cost_min", "cost_max"), ("effect_min", "effect_max"),
                        ("heatmap_sigma_min", "heatmap_sigma_max")):
        if params[least] > params[most]:
            raise common.bad_argument(NAME, f"task_params.{least}", f"at most {most} ({params[most]})", params[least])
    return params


def heatmap(day: Day, size: int, centers: int, sigmas: tuple[float, float], spacing: float) -> list[list[int]]:
    """Densities 0..5 on a ``size`` x ``size`` grid (rows are ``grid_j``): Gaussian hotspots summed, scaled so the
    emptiest cell is 0 and the densest 5. Hotspot centres keep ``spacing`` apart when 200 tries allow it."""
    placed: list[tuple[float, float]] = []
    for _ in range(centers):
        for _ in range(200):
            x, y = day.rng.uniform(0.2 * size, 0.8 * size), day.rng.uniform(0.2 * size, 0.8 * size)
            if all(math.dist((x, y), other) >= spacing for other in placed):
                break
        placed.append((x, y))
    spots = [(x, y, day.rng.uniform(*sigmas)) for x, y in placed]
    raw = [[sum(math.exp(-((i - x) ** 2 + (j - y) ** 2) / (2 * s * s)) for x, y, s in spots) for i in range(size)]
           for j in range(size)]
    low, high = min(map(min, raw)), max(map(max, raw))
    span = (high - low) or 1.0
    return [[round((value - low) / span * 5) for value in row] for row in raw]


def png(grid: list[list[int]]) -> bytes:
    """The heatmap drawn as the agent sees it: a coloured cell per grid square with its density written in it,
    ``grid_i`` across and ``grid_j`` up from the bottom."""
    size = len(grid)
    figure = Figure(figsize=(10, 9))
    axes = figure.subplots()
    image = axes.imshow(grid, cmap=ListedColormap(COLOURS), norm=BoundaryNorm([v - 0.5 for v in range(7)], 6),
                        interpolation="nearest", origin="lower", extent=(-0.5, size - 0.5, -0.5, size - 0.5))
    axes.set_title("Target user population density", fontsize=20, fontweight="bold")
    axes.set_xlabel("grid_i", fontsize=18, fontweight="bold")
    axes.set_ylabel("grid_j", fontsize=18, fontweight="bold")
    for ticks in (axes.set_xticks, axes.set_yticks):
        ticks(range(size))
        ticks([v - 0.5 for v in range(size)], minor=True)
    axes.grid(which="minor", color="#aaaaaa", linestyle="--", linewidth=0.5)
    axes.tick_params(labelsize=18)
    for j, row in enumerate(grid):
        for i, value in enumerate(row):
            axes.text(i, j, str(value), ha="center", va="center", fontsize=18)
    bar = figure.colorbar(image, ax=axes, ticks=range(6))
    bar.set_label("Density", fontsize=20, fontweight="bold")
    bar.ax.tick_params(labelsize=18)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=50, metadata={"Software": None})
    return buffer.getvalue()


def heatmap_text(group: str, grid: list[list[int]]) -> str:
    """The heatmap in words and numbers: every cell's density, a line per ``grid_j`` from the top of the image."""
    rows = "\n".join(f"grid_j={j}: " + " ".join(str(value) for value in grid[j]) for j in reversed(range(len(grid))))
    return (f"Target user population density heatmap for {group}: {len(grid)} x {len(grid)} cells, densities 0 to 5. "
            f"Each line is one row, grid_j, from the top of the image; its numbers are the cells' densities for "
            f"grid_i = 0 to {len(grid) - 1}, left to right.\n{rows}")


def _channels(day: Day, params: dict[str, Any], grid: list[list[int]]) -> list[dict[str, Any]]:
    size, kinds = len(grid), list(FIT)
    channels = []
    for number in range(1, params["num_channels"] + 1):
        kind = day.rng.choices(kinds, weights=MIXES[params["channel_mix"]])[0]
        i, j = day.rng.randrange(size), day.rng.randrange(size)
        base = day.rng.randint(params["effect_min"], params["effect_max"])
        cost = day.rng.randint(params["cost_min"], params["cost_max"])
        exposure = round(base * (0.5 + 0.5 * grid[j][i] / 5) * FIT[kind], 2)
        channels.append({"id": f"CH{number:03d}", "name": f"{kind}_{number:03d}", "type": kind, "grid_i": i,
                         "grid_j": j, "cost": cost, "base_effect": base, "audience_fit": FIT[kind],
                         "effective_exposure": exposure})
    return channels


def best_plan(channels: list[dict[str, Any]], budget: int) -> list[str]:
    """The channels of greatest total exposure costing at most ``budget`` (0/1 knapsack, in whole cents)."""
    best = [0] * (budget + 1)
    taken: list[bytearray] = []
    for channel in channels:
        cost, value = channel["cost"], round(channel["effective_exposure"] * 100)
        took = bytearray(budget + 1)
        for spend in range(budget, cost - 1, -1):
            if best[spend - cost] + value > best[spend]:
                best[spend], took[spend] = best[spend - cost] + value, 1
        taken.append(took)
    chosen, spend = [], budget
    for channel, took in zip(reversed(channels), reversed(taken)):
        if took[spend]:
            chosen.append(channel["id"])
            spend -= channel["cost"]
    return sorted(chosen)


def _describe(city: str, budget: int, output: str) -> str:
    return (f"From your mentor: we are running a one-week campaign in `{city}` aimed at college students aged 18–25, "
            f"with a total budget of ${budget:,}. Put together a multi-channel advertising plan that gets the most "
            "effective exposure without going over budget. For anything more you need, ask a colleague in the "
            f"Marketing department.\n\nWhat to hand in: a JSON file `{output}` at the top of your workspace with\n"
            "- `selected_channels`: the list of the chosen channels' **IDs**\n"
            "- `total_cost`: what the chosen channels cost together\n"
            "- `total_exposure`: their total effective exposure\n\nFor example:\n```json\n"
            '{\n    "selected_channels": ["CH001", "CH019"],\n    "total_cost": 4200,\n'
            '    "total_exposure": 5100.5\n}\n```')


class AdsStrategyPlan:
    name = NAME
    #: Hard: one of the paper's two named hard tasks (its human-guidance case): numbers read off an image, then a
    #: 0/1 knapsack.
    difficulty = "hard"

    def generate(self, day: Day, **arguments: Any) -> TaskSpec:
        common.known_arguments(NAME, arguments, ("task_params",))
        params = _params(arguments.get("task_params"))
        size, spacing = params["heatmap_size"], params["heatmap_min_center_distance"]
        grids = {group: heatmap(day, size, params["heatmap_centers"],
                                (params["heatmap_sigma_min"], params["heatmap_sigma_max"]),
                                0.22 * size if spacing is None else spacing) for group in GROUPS}
        for group, grid in grids.items():
            common.place_image(day, day.cloud_disk / FOLDER / f"target_user_density_{group}.png", png(grid),
                               heatmap_text(group, grid))
        channels = _channels(day, params, grids[GROUPS[0]])
        rows = [COLUMNS, *([str(channel[c]) for c in COLUMNS] for channel in channels)]
        common.place(day.cloud_disk / FOLDER / "channels.csv", "".join(",".join(row) + "\n" for row in rows))
        common.place(day.cloud_disk / FOLDER / HANDBOOK, HANDBOOK_TEXT)
        for employee in day.company.in_department("Marketing"):
            day.company.add_rule(employee, (
                f"If asked how to plan the ads strategy, point to the handbook, CloudDisk:{FOLDER}/{HANDBOOK}. If "
                f"asked where the target groups' distributions and the channels are: the heatmaps are in "
                f"CloudDisk:{FOLDER}/, named target_user_density_<group>.png, and the channel list is "
                f"CloudDisk:{FOLDER}/channels.csv. Say nothing beyond these pointers."))
        output = f"ads_strategy_plan_{params['city']}.json"
        return TaskSpec(NAME, _describe(params["city"], params["budget"], output), common.deadline(day), {
            "output_file": output, "handbook": HANDBOOK, "budget": params["budget"],
            "budget_tolerance": params["budget_tolerance"],
            "channels": {c["id"]: [c["cost"], c["effective_exposure"]] for c in channels},
            "optimal": best_plan(channels, params["budget"])})

    def sample_arguments(self, rng: random.Random) -> dict[str, Any]:
        return {"task_params": {"city": rng.choice(CITIES), "difficulty": rng.choice(SAMPLED_DIFFICULTIES)}}

    def hints(self, task: TaskSpec) -> Hints:
        target = f"{FOLDER}/target_user_density_{GROUPS[0]}.png"
        return (
            "This is an optimisation: the plan is the set of channels with the most total effective exposure whose "
            "total cost stays within the budget, and a channel's exposure depends on how dense the target group "
            "is in its grid cell, which only a heatmap image shows.",
            "Ask a Marketing colleague: they point to the handbook with the exposure formula and to the data in "
            f"`CloudDisk:{FOLDER}/`: `channels.csv` and one heatmap per audience. Only the college students' "
            "heatmap counts; the other two are distractors. The handbook has to be in your workspace.",
            f"send_message a Marketing colleague about the ads plan; download_file `{FOLDER}/{task.check['handbook']}` "
            f"and `{FOLDER}/channels.csv`; read_image `{target}` and copy every cell's density into a table "
            "(grid_i across, grid_j up from the bottom); in a Python script give each channel its effective "
            "exposure, base_effect x (0.5 + 0.5 x density / 5) x audience_fit, with the density of its cell; "
            "solve the 0/1 knapsack over the channels with the budget as capacity (dynamic programming over whole "
            "costs: picking by exposure per dollar can miss the best set); write `"
            f"{task.check['output_file']}` with selected_channels (the IDs), and total_cost and total_exposure "
            "summed by the script over the chosen channels; done.")

    def evaluate(self, task: TaskSpec, outcome: Outcome) -> Score:
        check = task.check
        handbook, path = (common.find(outcome.workspace, check[name]) for name in ("handbook", "output_file"))
        notes = [] if handbook else [f"Download `{FOLDER}/{check['handbook']}` from the cloud disk and follow it."]
        notes += [] if path else [f"Save the plan as `{check['output_file']}` in your workspace."]
        plan = common.read_json(path)
        if not plan:
            return Score(0, 13, ("The plan must be a valid, non-empty JSON file.",))
        return _plan_score(check, plan, bool(handbook) + bool(path), notes)


def _plan_score(check: Any, plan: Any, points: int, notes: list[str]) -> Score:
    form = "Write the plan in the format the task gives: selected_channels, total_cost and total_exposure."
    try:
        selected, cost, exposure = plan["selected_channels"], float(plan["total_cost"]), float(plan["total_exposure"])
    except (TypeError, KeyError, IndexError, ValueError, OverflowError):
        notes.append(form)
        selected, cost, exposure = [], 0.0, 0.0
    points += common.noted(isinstance(selected, list), form, notes)
    try:
        chosen = set(selected)  # as the reference reads it: a string is its letters, an object its keys
    except TypeError:
        chosen = None
    if chosen is None or not chosen.issubset(check["channels"]):
        notes.append("Choose only channels listed in `channels.csv`.")
        return Score(points, 13, tuple(notes))
    points += 1
    true_cost, true_exposure = (sum(check["channels"][c][i] for c in chosen) for i in (0, 1))
    points += 2 * common.noted(abs(cost - true_cost) < true_cost * 0.01, "The total cost is wrong: add it up again "
                               "with the calculator or a short script.", notes)
    points += 2 * common.noted(abs(exposure - true_exposure) < true_exposure * 0.05, "The total exposure is wrong: "
                               "check each channel's density on the heatmap (a table of them helps) and the formula.",
                               notes)
    points += 5 * common.noted(chosen == set(check["optimal"]), "This is not the best plan within the budget: a 0/1 "
                               "knapsack over the channels finds it.", notes)
    return Score(points, 13, tuple(notes))


FAMILY = AdsStrategyPlan()
