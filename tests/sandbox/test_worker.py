"""Sandbox workers from the harness's side: warm workers are reused with fresh instances that share nothing, a
worker that is killed or crashes is replaced, limits are in force inside, and the protocol refuses what is not its
own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.errors import ConfigError, WorldError
from occubench.executable.isolated import load_isolated
from occubench.sandbox import Limits, Provider, Worker, WorkerFailed, pool, protocol
from occubench.sandbox.pool import MAX_IDLE, WORKER_BYTES, available_memory, max_workers
from tests.sandbox.corpus import ATTACKS, Attack, make_corpus_world

UNCHECKED = "occubench.testing.unchecked"


def test_instances_in_a_warm_worker_share_nothing_and_the_worker_is_reused(tmp_path: Path,
                                                                           sandbox: Provider) -> None:
    folder = make_corpus_world(tmp_path, Attack(), mark=tmp_path / "m", port=9, harness=0)
    [world] = load_isolated(tmp_path, [folder], sandbox)
    first = world.environment()
    assert "error" not in first.call("assign_adjuster", {"claim_id": "CLM-1003", "adjuster_id": "ADJ-02"})
    assert first.state_diff()["claims"]["updated"]
    first.close()
    idle = world.pool.idle()
    second = world.environment()  # the same worker, lent again
    assert world.pool.idle() == idle[:-1]
    assert second.state_diff() == {}  # a fresh instance: the first one's change is not here
    assert second.call("get_claim", {"claim_id": "CLM-1003"})["adjuster_id"] != "ADJ-02"
    second.close()


def test_a_worker_killed_at_its_deadline_is_replaced(tmp_path: Path, sandbox: Provider) -> None:
    folder = make_corpus_world(tmp_path, ATTACKS["catastrophic_regex"], mark=tmp_path / "m", port=9, harness=0)
    [world] = load_isolated(tmp_path, [folder], sandbox, service=UNCHECKED)
    env = world.environment(time_limit=1)
    with pytest.raises(WorldError, match="tool get_claim: timeout"):
        env.call("get_claim", {"claim_id": "CLM-1004"})
    with pytest.raises(WorldError, match="closed|no longer running"):  # the instance died with its worker
        env.call("list_adjusters", {})
    env.close()
    fresh = world.environment()
    assert "adjusters" in fresh.call("list_adjusters", {})
    fresh.close()


def test_the_limits_hold_inside_the_worker_and_the_host_is_out_of_sight(tmp_path: Path, sandbox: Provider) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host only")
    host = [str(secret), "/etc/passwd", str(Path(__file__).parents[2] / "pyproject.toml"), "/root/.bashrc",
            "/home", "/var", "/run"]
    code = ('import resource, os\n'
            '    limits = (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE, resource.RLIMIT_CPU)\n'
            '    raise ValueError(repr([resource.getrlimit(r)[0] for r in limits] + [os.getuid()] + '
            f'[os.path.exists(p) for p in {host!r}]))\n')
    folder = make_corpus_world(tmp_path / "worlds", Attack(code), mark=tmp_path / "m", port=9, harness=0)
    [world] = load_isolated(tmp_path / "worlds", [folder], sandbox, service=UNCHECKED)
    env = world.environment()
    message = env.call("get_claim", {"claim_id": "CLM-1004"})["message"]
    env.close()
    limits = Limits()
    expected = [limits.memory_bytes, limits.file_bytes, limits.open_files, limits.cpu_seconds, 65534]
    assert message == f"ValueError: {expected + [False] * len(host)!r}"


def test_the_protocol_refuses_a_worker_of_another_version_and_oversized_messages(tmp_path: Path,
                                                                                 sandbox: Provider) -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.length((protocol.MAX_MESSAGE + 1).to_bytes(4, "big"))
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(b"[" * 100_000)
    worker = Worker(sandbox, "occubench.executable.service", [tmp_path], Limits())
    with pytest.raises(WorkerFailed) as refused:
        worker.request("no-such-request", {}, 10)
    assert refused.value.kind == "refused"
    worker.kill()
    with pytest.raises(WorkerFailed):
        worker.request("load", {"folder": "/"}, 10)


@pytest.mark.slow
def test_a_process_keeps_a_bounded_number_of_idle_workers(tmp_path: Path, sandbox: Provider) -> None:
    workers = pool(sandbox, "occubench.executable.service", [tmp_path])
    leased = [workers.lease() for _ in range(MAX_IDLE + 4)]
    for worker in leased:
        workers.release(worker)
    assert len(workers.idle()) == MAX_IDLE
    assert sum(worker.broken for worker in leased) == 4  # the oldest idle ones were stopped
    workers.close()
    assert all(worker.broken for worker in leased) and workers.idle() == []


def test_pools_are_kept_per_provider_service_and_folders(tmp_path: Path, sandbox: Provider) -> None:
    assert pool(sandbox, "s", [tmp_path]) is pool(sandbox, "s", [tmp_path / "." ])
    assert pool(sandbox, "s", [tmp_path]) is not pool(sandbox, "t", [tmp_path])


BOUNDED = """
import sys, threading
from pathlib import Path
from occubench.executable.isolated import load_isolated
from occubench.sandbox import detect
from tests.sandbox.corpus import Attack, make_corpus_world

root = Path(sys.argv[1])
[world] = load_isolated(root, [make_corpus_world(root, Attack(), mark=root / "m", port=9, harness=0)],
                        detect().provider)
lock, lent, most, done = threading.Lock(), [0], [0], []

def episode() -> None:
    env = world.environment()
    with lock:
        lent[0] += 1
        most[0] = max(most[0], lent[0])
    env.call("list_adjusters", {})
    with lock:
        lent[0] -= 1
    env.close()
    done.append(1)

threads = [threading.Thread(target=episode) for _ in range(12)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(most[0], len(done))
"""


def test_instances_beyond_the_workers_bound_wait_for_one_and_all_are_served(tmp_path: Path,
                                                                            sandbox: Provider) -> None:
    # Its own process: the bound is the process's, fixed at the first lease.
    env = {**os.environ, "OCCUBENCH_MAX_WORKERS": "3", "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run([sys.executable, "-c", BOUNDED, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    most, served = map(int, done.stdout.split())
    assert served == 12 and 1 <= most <= 3


def test_the_workers_bound_follows_memory_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCCUBENCH_MAX_WORKERS", "7")
    assert max_workers() == 7
    monkeypatch.setenv("OCCUBENCH_MAX_WORKERS", "many")
    with pytest.raises(ConfigError, match="OCCUBENCH_MAX_WORKERS"):
        max_workers()
    monkeypatch.delenv("OCCUBENCH_MAX_WORKERS")
    assert max_workers() == max(4, available_memory() * 3 // 4 // WORKER_BYTES)
