"""The website monitor of a Trainee-Bench day, the readings the Website Monitor family's agent must find: over the
past week (and more so the past day) the ``/blog`` page loads several times slower than the others, and the
database server ``DB-Prod-01`` is nearly full, filling further as the day's clock runs. The other readings are
healthy, as in the reference's monitor, whose log lines and reboot refusal are traps with nothing to find.

The numbers are drawn from the day's random source as generation left it (a copy, so the day's draws do not move):
the same seed, the same readings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

SLOW_PAGE = "/blog"
FULL_SERVER = "DB-Prod-01"
WINDOWS = ("last_7_days", "last_24_hours")
#: Each page's usual load time in milliseconds, as a range to draw from.
PAGES = {"/home": (320, 380), "/pricing": (420, 480), "/blog": (1450, 1650), "/docs": (560, 640),
         "/contact": (370, 430)}
#: A page is degraded past the first of these load times, slightly degraded past the second (the reference's).
DEGRADED, SLIGHTLY_DEGRADED = 1500, 1000
#: Disk usage at which the reference's monitor warns, and at which it calls the server critical.
WARNING_USAGE, CRITICAL_USAGE = 85.0, 95.0
HEALTHY = (("WebApp-Prod-01", "WEB_SERVER", "CPU usage: 14%, Memory: 27%."),
           ("DB-Prod-02", "DATABASE", "Disk usage at 61%."),
           ("Cache-Server-01", "CACHE", "Hit rate: 99.1%, Memory: 38%."))
#: The services the monitor names, each with a log (the cache server shows only in the health check).
SERVICES = ("WebApp-Prod-01", "DB-Prod-01", "DB-Prod-02")


@dataclass(frozen=True)
class Monitor:
    #: Average load time in milliseconds by time window, then page.
    load_times: dict[str, dict[str, int]]
    #: The full server's disk usage (percent) when the day starts, and when it reaches 100%.
    usage_at_start: float
    start: datetime
    full_at: datetime
    logs: dict[str, list[str]]

    @classmethod
    def of(cls, rng: random.Random, start: datetime) -> Monitor:
        week = {page: rng.randint(low, high) for page, (low, high) in PAGES.items()}
        # The past day is like the week, the slow page slower still.
        day = {page: ms + (rng.randint(200, 350) if page == SLOW_PAGE else rng.randint(-10, 20))
               for page, ms in week.items()}
        # Full late in the working day: critical from the start, with hours to act.
        full_at = start + timedelta(minutes=rng.randint(9 * 60, 11 * 60))
        return cls({"last_7_days": week, "last_24_hours": day}, round(rng.uniform(95.5, 96.5), 1), start, full_at,
                   _logs(rng, start - timedelta(days=1)))

    def usage(self, now: datetime) -> float:
        """The full server's disk usage at ``now``, rising evenly to 100%."""
        done = (now - self.start) / (self.full_at - self.start)
        return min(100.0, self.usage_at_start + (100.0 - self.usage_at_start) * max(0.0, done))

    def health(self, now: datetime) -> list[dict[str, str]]:
        usage = self.usage(now)
        if usage >= 99.9:
            status, details = "CRITICAL", ("Disk usage at 100%. The database is read-only and about to fail. "
                                           "Contact technical support now.")
        elif usage >= CRITICAL_USAGE:
            minutes = max(0, round((self.full_at - now) / timedelta(minutes=1)))
            status, details = "CRITICAL", (f"Disk usage at {usage:.1f}%, full in about {minutes} minutes. Contact "
                                           "technical support now.")
        elif usage >= WARNING_USAGE:
            status, details = "WARNING", f"Disk usage at {usage:.1f}%. Contact technical support now."
        else:
            status, details = "OK", f"Disk usage at {usage:.1f}%."
        rows = [{"server_id": s, "server_type": kind, "status": "OK", "details": d} for s, kind, d in HEALTHY]
        rows.insert(1, {"server_id": FULL_SERVER, "server_type": "DATABASE", "status": status, "details": details})
        return rows

    def summary(self, window: str) -> dict[str, Any]:
        times = self.load_times[window]
        slowest = max(times, key=lambda page: times[page])
        status = ("Degraded" if times[slowest] > DEGRADED else
                  "Slightly Degraded" if times[slowest] > SLIGHTLY_DEGRADED else "Optimal")
        return {"overall_status": status, "bottleneck_suggestion": slowest if status != "Optimal" else "None"}


def _logs(rng: random.Random, date: datetime) -> dict[str, list[str]]:
    """Ordinary log lines of the day before, with nothing in them about the slow page or the full disk."""
    def at(hour: int) -> str:
        return (date.replace(hour=hour, minute=0, second=0) + timedelta(seconds=rng.randint(0, 3599))).strftime(
            "%Y-%m-%d %H:%M:%S")

    def queries() -> list[str]:
        return [f"[INFO] {at(10)} - Query finished in {rng.randint(9, 18)} ms.",
                f"[INFO] {at(11)} - Connection opened for user 'app_user'.",
                f"[INFO] {at(12)} - Query finished in {rng.randint(9, 18)} ms."]

    return {"WebApp-Prod-01": [f"[WARN] {at(9)} - Static file missing: /images/banner_2019.png (404)",
                               f"[INFO] {at(10)} - Sign-in succeeded for user_id={rng.randint(10000, 99999)}",
                               f"[WARN] {at(11)} - Slower responses seen on /api/v1/account",
                               f"[INFO] {at(12)} - Release deployed: build {rng.randint(100, 999)}"],
            "DB-Prod-01": queries(), "DB-Prod-02": queries()}
