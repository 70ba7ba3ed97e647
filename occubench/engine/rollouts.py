"""A run's episodes as a training dataset: token ids, logprobs, a reward and a mask of the model's own tokens.

Rows come from the agent turns that ``--record-tokens`` kept (``Step.tokens``), never from re-tokenizing text.
An episode whose every turn's prompt extends the turn before — its prompt and completion, token for token, as a
chat template that re-renders the history unchanged makes it — is one row: the last prompt and completion, with
``mask`` 1 on every token the model generated and 0 on the instruction and on each observation between turns.
Where a prompt does not extend the turn before (the template changed earlier tokens, or ``--history-window`` left
turns out), the episode gives a row per turn instead: its prompt masked 0, its completion 1. ``logprobs`` is
aligned with the tokens: the model's tokens have theirs (where the endpoint returned them), the others None. The
reward is the verdict (1.0 or 0.0); a result that is an error is left out — an outage is nothing to learn from.
The rollout pool's episodes give the same rows (:meth:`occubench.distributed.Rollout.rows`, through
:func:`episode_rows`), from the tokens their actions carried and with their reward.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from occubench.core.results import Result
from occubench.errors import ConfigError
from occubench.store import RESULTS_FILE, latest_by_task, run_records
from occubench.util.jsonl import dumps_line, write_atomic
from occubench.util.text import terminal


def rollout_rows(result: Result) -> Iterator[dict[str, Any]]:
    """The rows of one episode of a run (see the module docstring); none if it is an error or kept no tokens."""
    if result.ok:
        yield from episode_rows(result.task_id, result.trial, 1.0 if result.is_correct else 0.0,
                                [step.tokens for step in result.steps])


def episode_rows(task_id: int | str, trial: int, reward: float,
                 tokens: Iterable[dict[str, Any] | None]) -> Iterator[dict[str, Any]]:
    """The rows of one episode whose turns kept ``tokens`` (a :class:`~occubench.core.trajectory.Step`'s, None
    where a turn kept none): those of a run's results and those of :class:`occubench.distributed.Rollout`."""
    turns = [turn for turn in tokens if turn is not None
             and isinstance(turn.get("prompt_ids"), list) and isinstance(turn.get("completion_ids"), list)]
    if not turns:
        return
    base = {"task_id": task_id, "trial": trial, "reward": reward}
    if _extends(turns):
        ids: list[int] = []
        mask: list[int] = []
        logprobs: list[float | None] = []
        for turn in turns:
            observation = turn["prompt_ids"][len(ids):]  # the instruction, then what came back between turns
            ids += observation + turn["completion_ids"]
            mask += [0] * len(observation) + [1] * len(turn["completion_ids"])
            logprobs += [None] * len(observation) + _own_logprobs(turn)
        yield {**base, "turn": None, "input_ids": ids, "mask": mask, "logprobs": logprobs}
        return
    for number, turn in enumerate(turns):
        prompt, completion = turn["prompt_ids"], turn["completion_ids"]
        yield {**base, "turn": number, "input_ids": prompt + completion,
               "mask": [0] * len(prompt) + [1] * len(completion),
               "logprobs": [None] * len(prompt) + _own_logprobs(turn)}


def _extends(turns: list[dict[str, Any]]) -> bool:
    """Whether each turn's prompt begins with the turn before's prompt and completion."""
    return all(later["prompt_ids"][:len(earlier["prompt_ids"]) + len(earlier["completion_ids"])]
               == earlier["prompt_ids"] + earlier["completion_ids"] for earlier, later in zip(turns, turns[1:]))


def _own_logprobs(turn: dict[str, Any]) -> list[float | None]:
    logprobs = turn.get("logprobs")
    completion = turn["completion_ids"]
    if isinstance(logprobs, list) and len(logprobs) == len(completion):
        return list(logprobs)
    return [None] * len(completion)


def export_rollouts(run_dir: Path, out: Path) -> int:
    """The run's latest result per episode as rows of ``out``, written whole or not at all: a Parquet table if its
    name ends in ``.parquet`` (with the ``parquet`` extra), else JSON Lines. Returns how many rows were written. A
    folder that is not a run is a :class:`ConfigError` naming it."""
    if not (run_dir / RESULTS_FILE).is_file():
        raise ConfigError(f"{run_dir}: not a run directory (no {RESULTS_FILE})")
    records = run_records(run_dir)  # read only: the run may be going on
    if records.warning:
        print(f"warning: {terminal(records.warning)}", file=sys.stderr)
    results = latest_by_task(records.results).values()
    rows = [row for result in results for row in rollout_rows(result)]
    write_atomic(out, _parquet(rows) if out.suffix == ".parquet" else b"".join(dumps_line(row) for row in rows))
    return len(rows)


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("--out *.parquet needs pyarrow: pip install 'occubench[parquet]'") from None
    # Task ids are numbers in some suites and text in others: text here, so one column holds them all.
    table = pa.Table.from_pylist([{**row, "task_id": str(row["task_id"])} for row in rows], schema=pa.schema([
        ("task_id", pa.string()), ("trial", pa.int64()), ("reward", pa.float64()), ("turn", pa.int64()),
        ("input_ids", pa.list_(pa.int64())), ("mask", pa.list_(pa.int8())), ("logprobs", pa.list_(pa.float64()))]))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())
