"""``--executor ray`` on AWM worlds: the Ray workers build the run's AWM worlds from its config, reuse the scenario
folders this process wrote, and record what a local run records — each task's verdict and the mode that decided it,
a verifier that does not compile as the task's environment error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from occubench import load_results
from occubench.awm.data import FILES
from occubench.cli import main
from occubench.testing import MockLLMServer
from occubench.testing.responders import scripted_responder
from occubench.util.paths import user_cache_dir
from tests.awm.conftest import data, sample  # noqa: F401 - the AWM sample's fixtures, used by name
from tests.awm.test_service import PURE
from tests.conftest import extra_reason

pytest.importorskip("ray", reason=extra_reason("ray"))  # the Ray instance is the package's (conftest.py)

from occubench.distributed.executor import worker_environment  # after the skip: it imports ray

pytestmark = pytest.mark.slow  # each test process starts a Ray cluster

#: A code-augmented verifier that reports what the episode changed: the judge decides from its report.
AUGMENTED = '''
import sqlite3

def verify_task(initial_db_path, final_db_path):
    def count(path):
        with sqlite3.connect(path) as connection:
            return connection.execute("SELECT COUNT(*) FROM user_subscriptions").fetchone()[0]
    return {"subscriptions_before": count(initial_db_path), "subscriptions_after": count(final_db_path)}
'''
#: A moment in time as SQLite writes it: the sample's seed rows are relative to when a worker built its database.
_MOMENT = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?")


def _timeless(request: dict, index: int) -> str | dict:
    """The scripted replies, blind to the seed rows' moments: the scripted judge's verdict is a hash of its prompt,
    which would otherwise depend on when each run's workers built their databases."""
    return scripted_responder(json.loads(_MOMENT.sub("<moment>", json.dumps(request))), index)


def _run(folder: Path, out: Path, executor: str) -> tuple[int, dict[str, tuple]]:
    with MockLLMServer(_timeless) as server:
        code = main(["run", "--suite", "awm", "--data-dir", str(folder), "--agent-model", "agent",
                     "--verifier-model", "judge", "--base-url", server.base_url, "--api-key", "k", "--output-dir",
                     str(out), "--run-name", "r", "--executor", executor, "--ray-workers", "2", "--task-ids",
                     "content_platform_1/0", "content_platform_1/1", "content_platform_1/2", "content_platform_1/3",
                     "code_hosting_2/0", "code_hosting_2/1"])
    return code, {r.task_id: (r.status, r.is_correct, r.verdict_details.get("verification_mode"), r.config_hash,
                              r.error.kind if r.error else None, r.final_answer,
                              [(call.name, call.arguments, "error" in call.observation) for call in r.tool_calls])
                  for r in load_results(out / "r" / "results.jsonl")}


def test_an_awm_run_on_ray_records_the_local_verdicts_and_modes(data: Path, tmp_path: Path,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def verifier(task: int, code: str) -> dict:
        return {"scenario": "content_platform_1", "task_idx": task, "verification": {"code": code}}

    lines = {FILES["pure_verifier"]: [verifier(0, PURE)],
             FILES["verifier"]: [verifier(1, AUGMENTED), verifier(2, "def verify_task(:")]}
    # The applications made this test's own (a comment): their folders are found only where this run wrote them.
    lines[FILES["app"]] = [{**record, "full_code": f"{record['full_code']}\n# {tmp_path}\n"}
                           for record in map(json.loads, (data / FILES["app"]).read_text().splitlines())]
    for name, records in lines.items():
        (data / name).write_text("".join(json.dumps(record) + "\n" for record in records))
    with monkeypatch.context() as unset:  # where the Ray instance's workers keep their cache by default
        unset.delenv("OCCUBENCH_CACHE_DIR")
        default = user_cache_dir() / "awm"
    runs = {executor: _run(data, tmp_path / executor, executor) for executor in ("local", "ray")}
    assert runs["ray"] == runs["local"]
    code, results = runs["ray"]
    assert code == 1  # an episode ended in an environment error: the verifier that does not compile
    modes = {task: (status, mode, error) for task, (status, _, mode, _, error, *_) in results.items()}
    assert modes == {"content_platform_1/0": ("ok", "pure_code", None),
                     "content_platform_1/1": ("ok", "code_augmented", None),
                     "content_platform_1/2": ("error", None, "environment"),
                     "content_platform_1/3": ("ok", "judge", None), "code_hosting_2/0": ("ok", "judge", None),
                     "code_hosting_2/1": ("ok", "judge", None)}
    assert all(isinstance(correct, bool) for status, correct, *_ in results.values() if status == "ok")
    assert any(calls and not any(failed for *_, failed in calls) for *_, calls in results.values())
    # Each scenario was written once, whole, to this process's cache (no folder of a copy under way left beside it),
    # which the workers reused: none wrote it to the cache their Ray instance would have given them.
    written = sorted(path.relative_to(tmp_path / "cache" / "awm") for path in (tmp_path / "cache" / "awm").glob("*/*"))
    assert sorted(path.name for path in written) == ["code_hosting_2", "content_platform_1"]
    assert not any((default / path).exists() for path in written)


def test_workers_are_told_where_this_process_keeps_its_cache(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("OCCUBENCH_CACHE_DIR", "XDG_CACHE_HOME", "OCCUBENCH_SANDBOX"):
        monkeypatch.delenv(name, raising=False)
    assert worker_environment() == {}  # each machine's own default
    monkeypatch.setenv("OCCUBENCH_CACHE_DIR", "cache")
    monkeypatch.setenv("OCCUBENCH_SANDBOX", "bubblewrap")
    assert worker_environment() == {"OCCUBENCH_CACHE_DIR": str(tmp_path / "cache"), "OCCUBENCH_SANDBOX": "bubblewrap"}
