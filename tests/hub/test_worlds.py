"""``--worlds REF`` as a user runs it: a package pushed to a git repository is installed through the sandbox, run,
cited in args.json and the report; once its version names another package, the run refuses to resume."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.executable.registry import builtin_worlds
from occubench.sandbox import Provider
from occubench.testing import MockLLMServer
from tests.conftest import extra_reason
from tests.hub.packages import package_folder

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def occubench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OCCUBENCH_CACHE_DIR": str(cwd / "cache"), "HOME": str(cwd / "home"),
           "GIT_CONFIG_NOSYSTEM": "1", "COLUMNS": "500"}
    return subprocess.run([sys.executable, "-m", "occubench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def test_a_run_from_a_package_cites_it_and_refuses_to_resume_once_its_version_moved(tmp_path: Path,
                                                                                      sandbox: Provider) -> None:
    package_folder(tmp_path / "pkg")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "registry.git")], check=True)
    registry = f"git+file://{tmp_path / 'registry.git'}"
    pushed = occubench("worlds", "push", "pkg", registry, "--name", "acme/claims", "--version", "1.0", cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split("digest: ")[1].split()[0]
    run = ["run", "--suite", "executable", "--agent", "reference", "--worlds", f"{registry}@1.0",
           "--output-dir", "runs"]
    first = occubench(*run, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (folder,) = (tmp_path / "runs").iterdir()  # the default folder: the same command finds it again
    args = json.loads((folder / "args.json").read_text())
    assert (args["worlds"], args["worlds_digest"]) == (f"{registry}@1.0", digest)
    assert f"{registry}@1.0 ({digest})" in first.stdout
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert results and all(r["is_correct"] for r in results)  # the package's world, with its reference solutions
    report = occubench("report", str(folder), "--format", "json", cwd=tmp_path)
    assert json.loads(report.stdout)["runs"][0]["worlds"] == f"{registry}@1.0 ({digest})"

    (tmp_path / "pkg" / "executable" / "insurance_claims" / "seed.sql").open("a").write("-- moved\n")
    moved = occubench("worlds", "push", "pkg", registry, "--name", "acme/claims", "--version", "1.0", "--force",
                      cwd=tmp_path)
    assert moved.returncode == 0, moved.stderr
    new = moved.stdout.split("digest: ")[1].split()[0]
    again = occubench(*run, cwd=tmp_path)
    assert again.returncode == 2 and digest in again.stderr and new in again.stderr
    assert len((folder / "results.jsonl").read_text().splitlines()) == len(results)
    # Pinned to the digest it ran, the run resumes (nothing is left to run).
    pinned = occubench(*[a if a != f"{registry}@1.0" else f"{registry}@{digest}" for a in run], "--run-name",
                       folder.name, cwd=tmp_path)
    assert pinned.returncode == 0, pinned.stderr
    assert len((folder / "results.jsonl").read_text().splitlines()) == len(results)


def test_a_package_without_the_suites_kind_or_beside_worlds_dir_is_refused(tmp_path: Path,
                                                                          sandbox: Provider) -> None:
    package_folder(tmp_path / "pkg")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "registry.git")], check=True)
    reference = f"git+file://{tmp_path / 'registry.git'}@1.0"
    assert occubench("worlds", "push", "pkg", reference, "--name", "acme/claims", "--version", "1.0",
                     cwd=tmp_path).returncode == 0
    awm = occubench("run", "--suite", "awm", "--agent", "reference", "--worlds", reference, cwd=tmp_path)
    assert awm.returncode == 2 and "none of the awm kind" in awm.stderr
    both = occubench("run", "--suite", "executable", "--agent", "reference", "--worlds", reference, "--worlds-dir",
                     "pkg/executable", cwd=tmp_path)
    assert both.returncode == 2 and "--worlds-dir" in both.stderr
    assert not (tmp_path / "results").exists()


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A git+file reference to a package of one built-in world, and this process's cache pointed at tmp_path."""
    package_folder(tmp_path / "pkg")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "registry.git")], check=True)
    reference = f"git+file://{tmp_path / 'registry.git'}@1.0"
    pushed = occubench("worlds", "push", "pkg", reference, "--name", "acme/claims", "--version", "1.0", cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return reference


def test_every_entry_point_takes_the_package_s_worlds(tmp_path: Path, published: str, sandbox: Provider) -> None:
    ids = {f"insurance_claims/{task.id}" for world in builtin_worlds() if world.name == "insurance_claims"
           for task in world.tasks}
    listed = occubench("tasks", "--suite", "executable", "--worlds", published, "--json", cwd=tmp_path)
    assert {row["task_id"] for row in json.loads(listed.stdout)} == ids
    checked = occubench("validate", "--suite", "executable", "--worlds", published, cwd=tmp_path)
    assert checked.returncode == 0 and f"{len(ids)}/{len(ids)} tasks valid" in checked.stdout
    pytest.importorskip("gymnasium", reason=extra_reason("gym"))
    from occubench.gym import make

    env = make("executable", worlds=published)
    try:
        observation, _ = env.reset()
        assert observation and str(env.unwrapped.task.task_id) in ids  # type: ignore[attr-defined]
    finally:
        env.close()
    pytest.importorskip("inspect_ai", reason=extra_reason("inspect"))
    from inspect_ai import eval as inspect_eval

    from occubench.inspect import executable

    with MockLLMServer() as server:
        [log] = inspect_eval(executable(worlds=published), model="openai/gpt-4o", display="none",
                             log_dir=str(tmp_path / "logs"), model_base_url=server.base_url,
                             model_args={"api_key": "k"})
    assert log.status == "success" and {str(sample.id) for sample in log.samples or []} == ids


@pytest.mark.slow  # starts a local Ray instance
def test_ray_workers_run_the_package_the_run_resolved(tmp_path: Path, published: str, sandbox: Provider) -> None:
    pytest.importorskip("ray", reason=extra_reason("ray"))
    done = occubench("run", "--suite", "executable", "--agent", "reference", "--worlds", published, "--executor",
                     "ray", "--ray-workers", "2", "--output-dir", "runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3 and all(r["is_correct"] for r in results)
    assert json.loads((folder / "args.json").read_text())["worlds_digest"] in done.stdout
