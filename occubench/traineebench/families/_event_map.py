"""Event Planning's world, drawn as the reference draws it: outing locations and restaurants around the company,
the road map joining them (the minimum spanning tree of their great-circle distances), each member's free dates
around a common window, and every morning-lunch-afternoon itinerary with its metrics. Each draw has its own random
source seeded as the reference's (``seed``, ``seed + 1``, ``seed + 2``) and draws in its order, so the same seed
gives its names, prices and dates: its configs' itinerary exists on the map of its default seed, 42."""

from __future__ import annotations

import calendar
import io
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

#: Where every itinerary starts and ends.
COMPANY_NAME, COMPANY_ADDRESS = "KnowledgeX", "200 People's Avenue, Huangpu, Shanghai"
COMPANY_AT = (31.2304, 121.4737)
PREFIXES = ("Maple", "Willow", "Silverlake", "Cloudhill", "Riverside", "Autumn", "Rainbow", "Stonegate")
PLACES = ("Forest", "Wetland", "Cultural Park", "Old Town", "Eco Park", "Country Park")
CATEGORIES = ("Park", "Historic Site", "Lakeside", "Greenway", "Garden", "Village")
STREETS = ("Rd", "St", "Ave", "Ln")
TICKETS = (0, 20, 30, 40, 50, 80, 100)
CUISINES = ("Shanghai", "Jiangsu/Zhejiang", "Sichuan", "Northeastern", "BBQ", "Hotpot", "Farmhouse", "Light Meal")
STEMS = ("Taste", "Cloud", "Harmony", "Old Stove", "Autumn", "Pine", "Maple", "Neighbor")
MEAL_PRICES = (50, 60, 70, 80, 90, 100, 120)
#: Locations lie within 25 km of the company; half the restaurants within 15 km of it, the others within 9 km of
#: a location.
LOCATION_RADIUS, RESTAURANT_RADIUS, NEAR_LOCATION = 25.0, 15.0, 0.6
#: The day's schedule: the start, each visit's and lunch's length in minutes, the coach's speed in km/h.
MORNING_START, VISIT, LUNCH, SPEED = 9 * 60, 120, 90, 30.0
#: The overall score's weights.
WEIGHTS = {"interest": 0.4, "cost": 0.4, "distance": 0.2}
#: A month's thirds, as ticket prices change with them: days 1-10, 11-20, 21 to the end.
PERIODS = ("early", "mid", "late")


@dataclass(frozen=True)
class Spot:
    """A location or a restaurant: ``kind`` is ``loc`` or ``res``; ``category`` a location's kind of place or a
    restaurant's cuisine; ``price`` a location's fixed ticket (None: free, or priced by period) or a restaurant's
    average price a person."""

    kind: str
    name: str
    intro: str
    address: str
    lat: float
    lon: float
    interest: float
    category: str
    price: float | None
    by_period: tuple[float, float, float] | None = None

    @property
    def node(self) -> str:
        return f"{self.kind}:{self.name}"

    def cost_on(self, day: date) -> float:
        if self.by_period is not None:
            return self.by_period[0 if day.day <= 10 else 1 if day.day <= 20 else 2]
        return self.price or 0.0


COMPANY = Spot("company", COMPANY_NAME, "", COMPANY_ADDRESS, *COMPANY_AT, 0.0, "", None)


def _around(rng: random.Random, centre: Spot, radius: float) -> tuple[float, float]:
    """A point spread evenly over the disc of ``radius`` km around ``centre`` (a degree of latitude is 111 km)."""
    distance, angle = radius * math.sqrt(rng.random()), rng.random() * 2 * math.pi
    return (centre.lat + distance * math.cos(angle) / 111.0,
            centre.lon + distance * math.sin(angle) / (111.0 * max(0.2, math.cos(math.radians(centre.lat)))))


def _unique(draw: Callable[[], tuple[str, str]], used: set[str]) -> tuple[str, str]:
    """A name (and what was drawn with it) not used yet: up to 100 draws, then the last one numbered."""
    for _ in range(100):
        name, extra = draw()
        if name not in used:
            break
    else:
        name = f"{name} {len(used) + 1}"
    used.add(name)
    return name, extra


def locations(n: int, seed: int) -> list[Spot]:
    rng, used, out = random.Random(seed), set[str](), []
    for _ in range(n):
        lat, lon = _around(rng, COMPANY, LOCATION_RADIUS)
        name, _ = _unique(lambda: (f"{rng.choice(PREFIXES)} {rng.choice(PLACES)}", ""), used)
        address = f"No.{rng.randint(1, 999)} {rng.choice(PREFIXES)} {rng.choice(STREETS)}"
        ticket, interest, category = rng.choice(TICKETS), round(rng.uniform(3.2, 4.9), 2), rng.choice(CATEGORIES)
        intro, by_period = f"{name}: an autumn outing spot.", None
        if ticket > 0 and rng.random() < 0.5:  # about half the paid ones cost less early in a month, more late
            by_period = (round(ticket * rng.uniform(0.8, 0.9), 2), round(ticket * rng.uniform(0.95, 1.05), 2),
                         round(ticket * rng.uniform(1.1, 1.3), 2))
            intro += " Tickets: ¥{} early in the month, ¥{} mid-month, ¥{} late in the month.".format(*by_period)
        price = None if by_period else float(ticket) or None
        out.append(Spot("loc", name, intro, address, lat, lon, interest, category, price, by_period))
    return out


def restaurants(n: int, seed: int, near: list[Spot]) -> list[Spot]:
    rng, used, out = random.Random(seed), set[str](), []
    centres = [(COMPANY, RESTAURANT_RADIUS)] * (n // 2) + [
        (near[i % len(near)], RESTAURANT_RADIUS * NEAR_LOCATION) for i in range(n - n // 2)]
    for centre, radius in centres:
        lat, lon = _around(rng, centre, radius)

        def draw() -> tuple[str, str]:
            cuisine = rng.choice(CUISINES)
            return f"{rng.choice(STEMS)} · {cuisine}", cuisine

        name, cuisine = _unique(draw, used)
        address = f"No.{rng.randint(1, 999)} {rng.choice(STEMS)} {rng.choice(STREETS)}"
        price, interest = float(rng.choice(MEAL_PRICES)), round(rng.uniform(3.2, 4.9), 2)
        out.append(Spot("res", name, f"{name}: {cuisine} cooking.", address, lat, lon, interest, cuisine, price))
    return out


def free_dates(people: int, year: int, month: int, seed: int) -> tuple[list[tuple[date, date]], tuple[date, date]]:
    """Each person's free days (three to seven in a row), all covering a common window of one to three days inside
    one third of the month; and that window."""
    rng = random.Random(seed)
    last = calendar.monthrange(year, month)[1]
    low, high = {"early": (1, 10), "mid": (11, 20), "late": (21, last)}[rng.choice(PERIODS)]
    length = rng.randint(1, min(3, high - low + 1))
    first = rng.randint(low, high - length + 1)
    final = first + length - 1
    spans = []
    for _ in range(people):
        days = rng.randint(3, 7)
        begin = rng.randint(max(low, first - (days - length)), first)
        end = begin + days - 1
        if end > high:
            end, begin = high, max(low, high - days + 1)
        spans.append((date(year, month, max(low, min(begin, first))), date(year, month, min(high, max(end, final)))))
    return spans, (date(year, month, first), date(year, month, final))


def haversine(a: Spot, b: Spot) -> float:
    """The great-circle distance in km."""
    phi1, phi2 = math.radians(a.lat), math.radians(b.lat)
    h = (math.sin(math.radians(b.lat - a.lat) / 2) ** 2
         + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(b.lon - a.lon) / 2) ** 2)
    return 6371.0 * 2 * math.atan2(math.sqrt(h), math.sqrt(1 - h))


def road_map(spots: list[Spot]) -> list[tuple[Spot, Spot, float]]:
    """The roads: the minimum spanning tree of all pairwise distances (Prim's), each edge (earlier spot, later
    spot, km) with the spots in the order given."""
    order = {s.node: i for i, s in enumerate(spots)}
    best: dict[str, tuple[float, Spot]] = {s.node: (haversine(spots[0], s), spots[0]) for s in spots[1:]}
    edges = []
    while best:
        node = min(best, key=lambda n: best[n][0])
        km, parent = best.pop(node)
        spot = spots[order[node]]
        edges.append((parent, spot, km) if order[parent.node] < order[node] else (spot, parent, km))
        for other in best:
            candidate = spots[order[other]]
            d = haversine(spot, candidate) if order[node] < order[other] else haversine(candidate, spot)
            if d < best[other][0]:
                best[other] = (d, spot)
    return edges


def distances(edges: list[tuple[Spot, Spot, float]]) -> dict[str, dict[str, float]]:
    """Road distances between every two spots: along the tree's one path, summed from the start."""
    roads: dict[str, list[tuple[str, float]]] = {}
    for a, b, km in edges:
        roads.setdefault(a.node, []).append((b.node, km))
        roads.setdefault(b.node, []).append((a.node, km))
    table = {}
    for source in roads:
        reached, pending = {source: 0.0}, [source]
        while pending:
            node = pending.pop()
            for other, km in roads[node]:
                if other not in reached:
                    reached[other] = reached[node] + km
                    pending.append(other)
        table[source] = reached
    return table


def _minutes(km: float) -> int:
    return math.ceil(km / SPEED * 60)


def itineraries(places: list[Spot], meals: list[Spot], road: dict[str, dict[str, float]],
                day: date) -> list[dict[str, Any]]:
    """Every itinerary (two distinct locations, a restaurant between them) with its metrics, best overall first;
    travel times rounded up to whole minutes, prices as on ``day``."""
    plans = []
    home = COMPANY.node
    for first in places:
        for second in places:
            if second is first:
                continue
            for meal in meals:
                legs = (road[home][first.node], road[first.node][meal.node], road[meal.node][second.node],
                        road[second.node][home])
                back = MORNING_START + 2 * VISIT + LUNCH + sum(_minutes(km) for km in legs)
                plans.append({"plan": {"morning": first.name, "lunch": meal.name, "afternoon": second.name},
                              "metrics": {
                                  "interest_score": first.interest + second.interest + meal.interest,
                                  "cost_per_person": round(first.cost_on(day) + second.cost_on(day)
                                                           + (meal.price or 0.0), 2),
                                  "total_travel_distance": round(legs[0] + legs[1] + legs[2] + legs[3], 2),
                                  "end_time": f"{back // 60:02d}:{back % 60:02d}"}})
    _score(plans)
    return sorted(plans, key=lambda p: p["metrics"]["overall_score"], reverse=True)


def _score(plans: list[dict[str, Any]]) -> None:
    """The overall score: the weighted interest, cost and distance, each scaled to [0, 1] over all the plans
    (cost and distance turned round, so that less is better; 0.5 when all plans are equal on it)."""
    def scaled(metric: str, lower_is_better: bool) -> list[float]:
        values = [p["metrics"][metric] for p in plans]
        low, high = min(values), max(values)
        if high - low < 1e-9:
            return [0.5] * len(values)
        return [1 - (v - low) / (high - low) if lower_is_better else (v - low) / (high - low) for v in values]

    cost, interest = scaled("cost_per_person", True), scaled("interest_score", False)
    distance = scaled("total_travel_distance", True)
    for plan, c, i, d in zip(plans, cost, interest, distance):
        plan["metrics"]["overall_score"] = round(WEIGHTS["cost"] * c + WEIGHTS["interest"] * i
                                                 + WEIGHTS["distance"] * d, 4)


#: What each optimal mode optimises, and whether more is better.
MODES = {"highest_interest": ("interest_score", True), "lowest_cost": ("cost_per_person", False),
         "shortest_distance": ("total_travel_distance", False), "highest_score": ("overall_score", True)}


def optimal(plans: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """Every plan as good as the best one on the mode's metric."""
    metric, more = MODES[mode]
    best = (max if more else min)(p["metrics"][metric] for p in plans)
    return [p for p in plans if p["metrics"][metric] == best]


def guidelines() -> str:
    """The planning rules the reference puts on the cloud disk (in our words, the same facts)."""
    w = WEIGHTS
    return "\n".join([
        "EVENT PLANNING GUIDELINES", "",
        "An itinerary visits one location in the morning, has lunch at a restaurant and visits another location in "
        "the afternoon; the morning and afternoon locations must differ.", "",
        "Schedule",
        f"- Everyone meets at the company at {MORNING_START // 60:02d}:{MORNING_START % 60:02d} and leaves together.",
        f"- Each location visit lasts {VISIT} minutes ({VISIT // 60} hours), sightseeing and rest included.",
        f"- Lunch lasts {LUNCH} minutes, ordering and rest included.", "",
        "Travel",
        f"- The coach averages {SPEED} km/h in city traffic: travel minutes = distance in km / {SPEED} x 60.",
        "- The route runs company -> morning location -> restaurant -> afternoon location -> company.", "",
        "Scoring",
        f"- interest_score (weight {w['interest']}, more is better): the two locations' and the restaurant's "
        "interest ratings added up.",
        f"- cost_per_person (weight {w['cost']}, less is better): both locations' tickets plus the restaurant's "
        "average price a person; some tickets cost differently early (days 1-10), mid (11-20) and late (21 on) "
        "in the month.",
        f"- total_travel_distance (weight {w['distance']}, less is better): the whole route's length in km.",
        f"- overall_score = {w['interest']} x interest_norm + {w['cost']} x (1 - cost_norm) + {w['distance']} x "
        "(1 - distance_norm), where x_norm = (x - x_min) / (x_max - x_min) over all candidate itineraries, and "
        "0.5 when x_max equals x_min.", ""])


def catalogue(places: list[Spot], meals: list[Spot]) -> str:
    """Every location and restaurant with what the metrics need (prices printed as the metrics use them)."""
    def entry(number: int, spot: Spot, kind: str, price: str) -> list[str]:
        return [f"{number}. {spot.name}", f"   {kind}: {spot.category}", f"   Address: {spot.address}",
                f"   Coordinates: ({spot.lat:.6f}, {spot.lon:.6f})", f"   {price}",
                f"   Interest score: {spot.interest}/5.0", f"   About: {spot.intro}", ""]

    lines = ["LOCATIONS AND RESTAURANTS", "", "Locations"]
    for number, spot in enumerate(places, 1):
        ticket = ("early month (days 1-10) ¥{}, mid month (11-20) ¥{}, late month (21-31) ¥{}".format(*spot.by_period)
                  if spot.by_period else f"¥{spot.price}" if spot.price else "free")
        lines += entry(number, spot, "Kind", f"Ticket: {ticket}")
    lines += ["Restaurants"]
    for number, spot in enumerate(meals, 1):
        lines += entry(number, spot, "Cuisine", f"Average price a person: ¥{spot.price}")
    return "\n".join([*lines, f"{len(places)} locations, {len(meals)} restaurants", ""])


def map_json(spots: list[Spot], edges: list[tuple[Spot, Spot, float]], made: str) -> dict[str, Any]:
    """The road map in the reference's JSON form: nodes with their position, edges with their length in km."""
    kinds = {"company": "company", "loc": "location", "res": "restaurant"}
    return {"projection": "lonlat",
            "meta": {"generated_at": made, "nodes": len(spots), "edges": len(edges), "graph_type": "tree"},
            "nodes": [{"id": s.node, "type": kinds[s.kind], "name": s.name, "lon": s.lon, "lat": s.lat}
                      for s in spots],
            "edges": [{"u": a.node, "v": b.node, "distance_km": round(km, 4)} for a, b, km in edges]}


def map_text(spots: list[Spot], edges: list[tuple[Spot, Spot, float]]) -> str:
    """The road map in words and numbers: each place at its coordinates, and each road with its length."""
    places = "\n".join(f"- {s.name} ({s.kind}), longitude {s.lon:.4f}, latitude {s.lat:.4f}" for s in spots)
    roads = "\n".join(f"- {a.name} to {b.name}: {km:.1f} km" for a, b, km in edges)
    return f"Road map of the company, the locations and the restaurants.\nPlaces:\n{places}\nRoads:\n{roads}"


def map_png(spots: list[Spot], edges: list[tuple[Spot, Spot, float]]) -> bytes:
    """The road map drawn: each place at its coordinates, each road labelled with its length."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # imported here: matplotlib loads in seconds
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 10))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for a, b, km in edges:
        axes.plot([a.lon, b.lon], [a.lat, b.lat], color="purple", linewidth=2, alpha=0.85)
        axes.text((a.lon + b.lon) / 2, (a.lat + b.lat) / 2, f"{km:.1f} km", fontsize=6, color="purple",
                  ha="center", va="center", bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "purple"},
                  zorder=2)  # under the places: a short road's label may hide, mst_map.json has every length
    styles = {"company": ("*", "red", 160, "Company"), "loc": ("o", "royalblue", 60, "Location"),
              "res": ("s", "orange", 55, "Restaurant")}
    for kind, (marker, colour, size, label) in styles.items():
        group = [s for s in spots if s.kind == kind]
        axes.scatter([s.lon for s in group], [s.lat for s in group], marker=marker, c=colour, s=size, label=label,
                     zorder=4)
        for s in group:
            axes.annotate(s.name, (s.lon, s.lat), xytext=(6, 6), textcoords="offset points", fontsize=7,
                          color=colour, bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": colour}, zorder=5)
    axes.set(title="Road map: company, locations and restaurants (km on each road)", xlabel="Longitude",
             ylabel="Latitude")
    axes.grid(alpha=0.25)
    axes.legend(loc="best", fontsize=8)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})  # no version: same seed, same bytes
    return buffer.getvalue()
