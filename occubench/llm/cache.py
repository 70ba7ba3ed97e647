"""A response cache in SQLite: runs can be resumed without paying twice and replayed exactly.

Each reply is stored under a hash of everything that determines it — endpoint, model, messages, tools,
parameters — and a sample index, so repeated identical requests (judge votes, trials) stay distinct samples.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from occubench.errors import CacheMissError, ConfigError
from occubench.llm.types import Reply, Tokens, ToolCallRequest, Usage

#: The trial the current thread's episode belongs to: repeated trials of a task must not share cached answers.
current_trial: ContextVar[int] = ContextVar("current_trial", default=0)


def cache_key(base_url: str, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              params: dict[str, Any], sample: int) -> str:
    payload = json.dumps([base_url, model, messages, tools or [], params, sample, current_trial.get()], sort_keys=True,
                         separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class Cache(Protocol):
    """What a client asks of its response cache: :class:`ResponseCache`, or a proxy to one on the node a Ray run
    started from (``occubench.distributed``). ``get`` raises :class:`CacheMissError` on a miss in replay mode."""

    def get(self, key: str) -> tuple[Reply, Usage] | None: ...

    def put(self, key: str, reply: Reply, usage: Usage) -> None: ...


class ResponseCache:
    """Thread-safe; one connection guarded by a lock (writes are small and rare next to network time)."""

    def __init__(self, path: str | Path, *, replay: bool = False) -> None:
        self.path = Path(path)
        self.replay = replay
        if replay and not self.path.is_file():
            raise ConfigError(f"--replay: no cache at {self.path}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"--cache: cannot use {self.path} as a response cache: {exc}") from None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> tuple[Reply, Usage] | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        if row is None:
            if self.replay:
                raise CacheMissError(f"--replay: the cache {self.path} holds no response for this request "
                                     "(was the original run made with the same settings and --date?)")
            return None
        data = json.loads(row[0])
        reply = Reply(content=data["content"], finish_reason=data["finish_reason"],
                      tool_calls=tuple(ToolCallRequest(*call) for call in data["tool_calls"]),
                      reasoning=data.get("reasoning"), tokens=Tokens.read(data.get("tokens")))
        return reply, Usage.from_dict(data["usage"])

    def put(self, key: str, reply: Reply, usage: Usage) -> None:
        value = json.dumps({"content": reply.content, "finish_reason": reply.finish_reason,
                            "tool_calls": [[c.id, c.name, c.arguments] for c in reply.tool_calls],
                            "reasoning": reply.reasoning, "usage": usage.to_dict(),
                            **({"tokens": reply.tokens.to_dict()} if reply.tokens else {})}, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, reply) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self._lock:
            self._db.close()
