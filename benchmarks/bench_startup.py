"""Start-up cost of commands that make no model request, as a ratio to a bare interpreter, in one run.

    python benchmarks/bench_startup.py [--repeat 7]

Each command runs in a fresh interpreter; the figure is the median wall time of ``--repeat`` runs. Also reports
whether the command imported the openai SDK (it should not: only runs that call a model need it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

PROBE = "import sys, runpy; sys.argv = {argv!r}; {body}; print('openai' in sys.modules, file=sys.stderr)"

COMMANDS = {
    "python -c pass": None,
    "occubench --help": ["occubench", "--help"],
    "occubench suites": ["occubench", "suites"],
    "import occubench.report": "import occubench.report",
    "occubench --version": ["occubench", "--version"],
}


def _code(command: list[str] | str) -> str:
    if isinstance(command, str):
        return PROBE.format(argv=["x"], body=command)
    body = "from occubench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    return PROBE.format(argv=command, body="exec(" + repr(body) + ")")


def measure(command: list[str] | str | None, repeat: int) -> tuple[float, bool]:
    code = "pass" if command is None else _code(command)
    times, imported = [], False
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - started)
        imported = done.stderr.strip().endswith("True")
    return statistics.median(times), imported


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    base, _ = measure(None, args.repeat)
    print(f"{'command':28} {'median s':>9} {'× python -c pass':>17}  openai imported")
    for name, command in COMMANDS.items():
        wall, imported = (base, False) if command is None else measure(command, args.repeat)
        print(f"{name:28} {wall:9.3f} {wall / base:17.1f}  {'yes' if imported else 'no'}")


if __name__ == "__main__":
    main()
