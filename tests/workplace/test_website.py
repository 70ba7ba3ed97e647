"""The website monitor (``occubench.workplace.website``) a Trainee-Bench day's agent reads: /blog the slowest page
by far, DB-Prod-01 nearly full and filling as the day's clock runs, every other reading healthy; the same day gives
the same readings, and reading them leaves the day's random source where generation left it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from occubench.traineebench.families import family
from occubench.traineebench.families.website_analysis import FAMILY
from occubench.traineebench.plugin import TOOLSET
from occubench.workplace import website
from occubench.workplace.environment import WorkplaceEnvironment
from occubench.workplace.world import World
from tests.traineebench.conftest import make_day


@pytest.fixture
def day(tmp_path: Path) -> World:
    """A Trainee-Bench day (the monitor's tools are Trainee-Bench's)."""
    return make_day(tmp_path / "day")


def env_of(day: World) -> WorkplaceEnvironment:
    return WorkplaceEnvironment(day, [], TOOLSET, family)  # the monitor runs no shell command


def full_server(env: WorkplaceEnvironment) -> dict[str, str]:
    servers = env.call("get_system_health", {})["servers"]
    assert {s["server_id"]: s["status"] for s in servers if s["server_id"] != website.FULL_SERVER} == {
        "WebApp-Prod-01": "OK", "DB-Prod-02": "OK", "Cache-Server-01": "OK"}
    return next(s for s in servers if s["server_id"] == website.FULL_SERVER)


def test_the_blog_page_is_the_slow_one_over_the_week_and_the_day(day: World) -> None:
    env = env_of(day)
    assert FAMILY.generate(day).check["page"] == website.SLOW_PAGE  # what the family's report must name
    for window in website.WINDOWS:
        pages = env.call("get_historical_load_times", {"time_window": window})["pages"]
        times = {p["page"]: p["avg_load_time_ms"] for p in pages}
        assert set(times) == set(website.PAGES)
        assert max(times, key=lambda page: times[page]) == website.SLOW_PAGE
        assert times[website.SLOW_PAGE] > 2 * max(ms for page, ms in times.items() if page != website.SLOW_PAGE)
        summary = env.call("get_performance_summary", {"time_window": window})
        assert summary["bottleneck_suggestion"] == website.SLOW_PAGE and "Degraded" in summary["overall_status"]
    assert env.call("get_performance_summary", {})["overall_status"] == "Degraded"  # the past day: past 1500 ms
    only = env.call("get_historical_load_times", {"page_url": "/docs"})["pages"]
    assert [p["page"] for p in only] == ["/docs"]
    assert env.call("get_historical_load_times", {"page_url": "/nowhere"})["pages"] == []
    assert env.call("get_historical_load_times", {"time_window": "last_year"})["error"] == "invalid_arguments"


def test_the_database_is_nearly_full_and_fills_as_the_clock_runs(day: World) -> None:
    env = env_of(day)
    first = full_server(env)
    assert first["status"] == "CRITICAL" and "technical support" in first["details"]
    usage = float(first["details"].split("Disk usage at ")[1].split("%")[0])
    assert 95 <= usage < 100 and "full in about" in first["details"]
    env.call("jump_time", {"minutes": 120})
    later = float(full_server(env)["details"].split("Disk usage at ")[1].split("%")[0])
    assert usage < later < 100
    env.call("jump_time", {"minutes": 11 * 60})
    assert "read-only" in full_server(env)["details"]


def test_the_logs_list_and_reboot_are_there_with_nothing_to_find(day: World) -> None:
    env = env_of(day)
    services = env.call("list_monitored_services", {})["services"]
    assert website.FULL_SERVER in services
    for server in services:
        lines = env.call("get_error_logs", {"server_id": server})["lines"]
        assert lines and all(str((day.start - timedelta(days=1)).date()) in line for line in lines)
        assert not any(word in " ".join(lines) for word in ("blog", "disk", "Disk"))
    assert len(env.call("get_error_logs", {"server_id": "WebApp-Prod-01", "lines": 2})["lines"]) == 2
    for arguments in ({"server_id": "Cache-Server-01"}, {"server_id": "x" * 100_000},
                      {"server_id": "DB-Prod-01", "lines": 0}, {"server_id": "DB-Prod-01", "lines": -10**30}):
        answer = env.call("get_error_logs", arguments)
        assert answer["error"] == "tool_error" and len(answer["message"]) < 300, answer
    refused = env.call("reboot_server", {"server_id": website.FULL_SERVER})
    assert refused["error"] == "tool_error" and "permission denied" in refused["message"]


@pytest.mark.parametrize("tool", ["get_historical_load_times", "get_system_health", "get_error_logs"])
def test_the_same_day_gives_the_same_readings_and_its_random_source_stays(tmp_path: Path, tool: str) -> None:
    arguments = {"server_id": website.FULL_SERVER} if tool == "get_error_logs" else {}
    days = [make_day(tmp_path / name, seed) for name, seed in (("a", 5), ("b", 5), ("c", 6))]
    state = days[0].rng.getstate()
    readings = [env_of(day).call(tool, arguments) for day in days]
    assert readings[0] == readings[1] != readings[2]
    assert days[0].rng.getstate() == state
