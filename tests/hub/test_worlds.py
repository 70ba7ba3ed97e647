"""``--worlds REF`` as a user runs it: a package pushed to a git repository is installed through the sandbox, run,
cited in args.json and the report; once its version names another package, the run refuses to resume."""

from __future__ import annotations

import csv
import hashlib
import io
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
from tests.hub.oci_server import OciServer, oci_server
from tests.hub.packages import package_folder

__all__ = ["oci_server"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def occubench(*args: str, cwd: Path, columns: int = 500) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OCCUBENCH_CACHE_DIR": str(cwd / "cache"), "HOME": str(cwd / "home"),
           "GIT_CONFIG_NOSYSTEM": "1", "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "occubench", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def installed(cwd: Path) -> list[str]:
    """The digests of the packages installed in ``cwd``'s cache, and anything else left in the store."""
    store = cwd / "cache" / "worlds"
    return sorted(str(path.relative_to(store)) for path in store.glob("*/*")) if store.exists() else []


@pytest.mark.slow
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
    assert f"Worlds: {registry}@1.0 ({digest})" in first.stdout.splitlines()
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert results and all(r["is_correct"] for r in results)  # the package's world, with its reference solutions
    assert installed(tmp_path) == [f"sha256/{digest.removeprefix('sha256:')}"]
    # The report cites the package: its reference and digest apart in JSON and CSV, together in Markdown.
    report = json.loads(occubench("report", str(folder), "--format", "json", cwd=tmp_path).stdout)
    assert (report["runs"][0]["worlds"], report["runs"][0]["worlds_digest"]) == (f"{registry}@1.0", digest)
    rows = list(csv.DictReader(io.StringIO(occubench("report", str(folder), "--format", "csv", cwd=tmp_path).stdout)))
    assert rows and {(row["worlds"], row["worlds_digest"]) for row in rows} == {(f"{registry}@1.0", digest)}
    markdown = occubench("report", str(folder), cwd=tmp_path).stdout
    assert f"Worlds: {registry}@1.0 ({digest})" in markdown.splitlines()

    (tmp_path / "pkg" / "executable" / "insurance_claims" / "seed.sql").open("a").write("-- moved\n")
    push = ["worlds", "push", "pkg", registry, "--name", "acme/claims", "--version", "1.0"]
    refused = occubench(*push, cwd=tmp_path)
    assert refused.returncode == 2 and f"version 1.0 holds the package {digest}" in refused.stderr
    assert "--force" in refused.stderr
    moved = occubench(*push, "--force", cwd=tmp_path)
    assert moved.returncode == 0, moved.stderr
    new = moved.stdout.split("digest: ")[1].split()[0]
    assert f"replaced: {digest} " in moved.stdout  # what the version named before, which results cite
    again = occubench(*run, cwd=tmp_path)
    assert again.returncode == 2 and digest in again.stderr and new in again.stderr
    # Refused before the new package was fetched: the store holds the package the run ran, and nothing else.
    assert installed(tmp_path) == [f"sha256/{digest.removeprefix('sha256:')}"]
    assert len((folder / "results.jsonl").read_text().splitlines()) == len(results)
    # The command the refusal gives resumes the run, pinned to the digest it ran (nothing is left to run).
    resume = again.stderr.split("pinned: ")[1].split("; or")[0].split()
    assert resume == ["--worlds", f"{registry}@{digest}", "--run-name", folder.name]
    pinned = occubench(*[a for a in run if a not in ("--worlds", f"{registry}@1.0")], *resume, cwd=tmp_path)
    assert pinned.returncode == 0, pinned.stderr
    assert len((folder / "results.jsonl").read_text().splitlines()) == len(results)


def test_a_moved_version_is_refused_before_the_package_it_names_now_is_fetched(tmp_path: Path, oci_server: OciServer,
                                                                               sandbox: Provider) -> None:
    """The resume asks the registry which package the version names (its OCI manifest), and no more: the new
    package's layer is taken out of the registry's store, so a fetch of it could not succeed, and the refusal still
    comes, naming both digests, with nothing new installed; by the default folder and by --run-name alike."""
    package_folder(tmp_path / "pkg")
    reference = f"oci://{oci_server.host}/acme/claims:1.0"
    pushed = occubench("worlds", "push", "pkg", reference, "--name", "acme/claims", "--version", "1.0", cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split("digest: ")[1].split()[0]
    run = ["run", "--suite", "executable", "--agent", "reference", "--worlds", reference, "--output-dir", "runs"]
    first = occubench(*run, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (folder,) = (tmp_path / "runs").iterdir()

    (tmp_path / "pkg" / "executable" / "insurance_claims" / "seed.sql").open("a").write("-- moved\n")
    packed = occubench("worlds", "pack", "pkg", "--name", "acme/claims", "--version", "1.0", "--out", "new.tar",
                       cwd=tmp_path)
    assert packed.returncode == 0, packed.stderr
    moved = occubench("worlds", "push", "new.tar", reference, "--force", cwd=tmp_path)
    assert moved.returncode == 0, moved.stderr
    new = moved.stdout.split("digest: ")[1].split()[0]
    assert f"replaced: {digest} " in moved.stdout
    oci_server.blob_file("sha256:" + hashlib.sha256((tmp_path / "new.tar").read_bytes()).hexdigest()).unlink()

    for where in ([], ["--run-name", folder.name]):
        again = occubench(*run, *where, cwd=tmp_path)
        assert again.returncode == 2, again.stderr
        assert f"holds results of the world package {digest}, and --worlds {reference} now names {new}" in again.stderr
        assert f"--worlds oci://{oci_server.host}/acme/claims@{digest} --run-name {folder.name}" in again.stderr
        assert installed(tmp_path) == [f"sha256/{digest.removeprefix('sha256:')}"]
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == [folder.name]


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
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A git+file reference to a package of one built-in world and its digest, and this process's cache pointed at
    tmp_path."""
    package_folder(tmp_path / "pkg")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "registry.git")], check=True)
    reference = f"git+file://{tmp_path / 'registry.git'}@1.0"
    pushed = occubench("worlds", "push", "pkg", reference, "--name", "acme/claims", "--version", "1.0", cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return reference, pushed.stdout.split("digest: ")[1].split()[0]


@pytest.mark.slow
def test_every_entry_point_takes_the_package_s_worlds(tmp_path: Path, published: tuple[str, str],
                                                      sandbox: Provider) -> None:
    reference, digest = published
    cited = f"Worlds: {reference} ({digest})"  # one line, however narrow the terminal: a grep finds it whole
    ids = {f"insurance_claims/{task.id}" for world in builtin_worlds() if world.name == "insurance_claims"
           for task in world.tasks}
    listed = occubench("tasks", "--suite", "executable", "--worlds", reference, "--json", cwd=tmp_path, columns=40)
    assert {row["task_id"] for row in json.loads(listed.stdout)} == ids  # stdout: the JSON alone
    assert cited in listed.stderr.splitlines()
    table = occubench("tasks", "--suite", "executable", "--worlds", reference, cwd=tmp_path, columns=40)
    assert table.returncode == 0 and cited in table.stdout.splitlines()
    checked = occubench("validate", "--suite", "executable", "--worlds", reference, cwd=tmp_path, columns=40)
    assert checked.returncode == 0 and f"{len(ids)}/{len(ids)} tasks valid" in checked.stdout
    assert cited in checked.stdout.splitlines()
    pytest.importorskip("gymnasium", reason=extra_reason("gym"))
    from occubench.gym import make

    env = make("executable", worlds=reference)
    try:
        observation, _ = env.reset()
        assert observation and str(env.unwrapped.task.task_id) in ids  # type: ignore[attr-defined]
    finally:
        env.close()
    pytest.importorskip("inspect_ai", reason=extra_reason("inspect"))
    from inspect_ai import eval as inspect_eval

    from occubench.inspect import executable

    with MockLLMServer() as server:
        [log] = inspect_eval(executable(worlds=reference), model="openai/gpt-4o", display="none",
                             log_dir=str(tmp_path / "logs"), model_base_url=server.base_url,
                             model_args={"api_key": "k"})
    assert log.status == "success" and {str(sample.id) for sample in log.samples or []} == ids


@pytest.mark.slow  # starts a local Ray instance
def test_ray_workers_run_the_package_the_run_resolved(tmp_path: Path, published: tuple[str, str],
                                                      sandbox: Provider) -> None:
    pytest.importorskip("ray", reason=extra_reason("ray"))
    done = occubench("run", "--suite", "executable", "--agent", "reference", "--worlds", published[0], "--executor",
                     "ray", "--ray-workers", "2", "--output-dir", "runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    results = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(results) == 3 and all(r["is_correct"] for r in results)
    assert json.loads((folder / "args.json").read_text())["worlds_digest"] == published[1]
    assert f"Worlds: {published[0]} ({published[1]})" in done.stdout.splitlines()
