"""`occubench doctor` reports every extra the installed distribution declares, read from its metadata: usable, or
what it lacks and the command that adds it. (.ci/extras.sh checks it in a fresh virtualenv per extra.)"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import metadata
from pathlib import Path


def doctor(cwd: Path, pythonpath: Path | None = None) -> list[str]:
    env = {**os.environ, **({"PYTHONPATH": str(pythonpath)} if pythonpath else {})}
    done = subprocess.run([sys.executable, "-m", "occubench", "doctor"], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return [line.strip() for line in lines[lines.index("extras:") + 1:]]


def test_every_declared_extra_is_reported(tmp_path: Path) -> None:
    declared = metadata("occubench").get_all("Provides-Extra") or []
    assert {"openai", "gym", "ray", "inspect", "docs", "awm", "parquet", "hub", "dev"} <= set(declared)
    # The development environment the tests run in has every extra (dev includes them all).
    assert doctor(tmp_path) == [f"{extra}: yes" for extra in declared]


def test_an_extra_that_lacks_a_package_or_a_version_says_what_to_install(tmp_path: Path) -> None:
    # Installed metadata ahead of the real one on the path: an occubench whose extras need what this environment
    # lacks (a package never installed, pytest at a version not released, an extra of an extra).
    info = tmp_path / "site" / "occubench-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("\n".join([
        "Metadata-Version: 2.1", "Name: occubench", "Version: 0.1.0",
        "Provides-Extra: fine", 'Requires-Dist: pytest>=1; extra == "fine"',
        "Provides-Extra: absent", 'Requires-Dist: no-such-package-anywhere>=1; extra == "absent"',
        "Provides-Extra: old", 'Requires-Dist: pytest>=999; extra == "old"',
        "Provides-Extra: nested", 'Requires-Dist: occubench[absent,fine]; extra == "nested"',
        "Provides-Extra: elsewhere", 'Requires-Dist: pytest>=1; extra == "elsewhere" and python_version < "3"', ""]))
    lines = doctor(tmp_path, pythonpath=tmp_path / "site")
    pytest_version = metadata("pytest")["Version"]
    assert lines == [
        "fine: yes",
        "absent: no, lacks no-such-package-anywhere: pip install 'occubench[absent]'",
        f"old: no, lacks pytest {pytest_version} (needs >=999): pip install 'occubench[old]'",
        "nested: no, lacks no-such-package-anywhere: pip install 'occubench[nested]'",
        "elsewhere: yes",  # its one requirement is not for this Python
    ]
