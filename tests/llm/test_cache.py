"""The response cache: hits skip the endpoint, votes are stored as separate samples, replay refuses misses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.llm import CacheMissError, LLMClient, ResponseCache
from occubench.testing import MockLLMServer

ASK = [{"role": "user", "content": "hello"}]


def counting(request: dict, index: int) -> str:
    return f"reply {index}"


def test_hits_skip_the_endpoint_and_keep_the_original_usage(tmp_path: Path) -> None:
    with MockLLMServer(counting) as server:
        client = LLMClient("k", server.base_url, cache=ResponseCache(tmp_path / "c.sqlite"))
        first = client.chat("m", ASK, params={"temperature": 0})
        again = client.chat("m", ASK, params={"temperature": 0})
        other = client.chat("m", ASK, params={"temperature": 1})
        second_sample = client.chat("m", ASK, params={"temperature": 0}, sample=1)
    assert server.stats.requests == 3
    assert again == first and other.replies[0].content == "reply 0" and second_sample.usage.calls == 1
    assert client.cache is not None and client.cache.hits == 1


def test_samples_fetched_with_n_are_replayed_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with MockLLMServer(counting) as server:
        base_url = server.base_url
        original = LLMClient("k", base_url, cache=ResponseCache(path)).samples("judge", ASK, 3)
    assert server.stats.requests == 1 and [r.content for r in original.replies] == ["reply 0", "reply 1", "reply 2"]
    # The replaying client cannot reach any endpoint; it must never need to.
    replayed = LLMClient("k", base_url, cache=ResponseCache(path, replay=True)).samples("judge", ASK, 3)
    assert replayed == original
    assert sum(1 for _ in sqlite3.connect(path).execute("SELECT key FROM responses")) == 3


def test_replay_refuses_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    client = LLMClient("k", "http://127.0.0.1:9/v1", cache=ResponseCache(path, replay=True))
    with pytest.raises(CacheMissError, match="holds no response"):
        client.chat("m", ASK)


def test_bad_cache_paths_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--replay: no cache at"):
        ResponseCache(tmp_path / "none.sqlite", replay=True)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match="cannot use .*garbage.sqlite"):
        ResponseCache(garbage)
