"""One epoch of a GRPO-style update on CPU, from the dataset ``occubench export`` writes.

    occubench run --agent-model M --base-url http://127.0.0.1:8000/v1 ... --record-tokens --trials 4
    occubench export results/<run> --out rollouts.jsonl
    python examples/grpo_tiny.py rollouts.jsonl

The policy is a toy, so that the update runs in a second with NumPy alone: a seeded bigram model (an embedding of
the token before, then a softmax over the ids the dataset holds). Put your model in its place; the rest is the
recipe: each episode's advantage relative to its task's group of trials, a PPO-style clipped ratio against the
behaviour logprobs the endpoint returned, and a loss on the model's own tokens (mask 1) only.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import numpy as np

DIM, LR, CLIP, EPS = 16, 2.0, 0.2, 1e-6


class Bigram:
    def __init__(self, vocab: set[int], seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.index = {token: i for i, token in enumerate(sorted(vocab))}
        self.embed = rng.normal(0, 0.1, (len(vocab), DIM))
        self.out = rng.normal(0, 0.1, (DIM, len(vocab)))

    def forward(self, ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each token's logprob given the one before (the first has none), and what the gradient needs."""
        x = np.array([self.index[token] for token in ids])
        hidden = self.embed[x[:-1]]
        logits = hidden @ self.out
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        return np.log(probs[np.arange(len(x) - 1), x[1:]]), x, hidden, probs


def advantages(rows: list[dict]) -> dict[tuple[str, int], float]:
    """(r - mean) / (std + eps) over each task's trials; an episode written as a row per turn counts once."""
    episodes = {(str(row["task_id"]), row["trial"]): row["reward"] for row in rows}
    groups = defaultdict(list)
    for (task, _), reward in episodes.items():
        groups[task].append(reward)
    return {(task, trial): (reward - np.mean(groups[task])) / (np.std(groups[task]) + EPS)
            for (task, trial), reward in episodes.items()}


def prepare(model: Bigram, rows: list[dict]) -> list[dict]:
    """Per row: the ids, the mask and the behaviour logprobs of the predicted tokens (the endpoint's where the
    dataset has them, else the model's own before the update), and the episode's advantage."""
    advantage = advantages(rows)
    batch = []
    for row in rows:
        own = model.forward(row["input_ids"])[0]
        given = np.array([np.nan if lp is None else lp for lp in row["logprobs"][1:]], dtype=float)
        batch.append({"task": str(row["task_id"]), "ids": row["input_ids"], "mask": np.array(row["mask"][1:]) == 1,
                      "old": np.where(np.isnan(given), own, given),
                      "advantage": advantage[(str(row["task_id"]), row["trial"])]})
    return batch


def loss_and_grads(model: Bigram, batch: list[dict]) -> tuple[float, np.ndarray, np.ndarray]:
    """The clipped surrogate -min(ratio A, clip(ratio) A), averaged over the masked tokens, and its gradients."""
    count = max(1, sum(int(item["mask"].sum()) for item in batch))
    loss, grad_embed, grad_out = 0.0, np.zeros_like(model.embed), np.zeros_like(model.out)
    for item in batch:
        logprobs, x, hidden, probs = model.forward(item["ids"])
        ratio, a = np.exp(logprobs - item["old"]), item["advantage"]
        unclipped, clipped = ratio * a, np.clip(ratio, 1 - CLIP, 1 + CLIP) * a
        loss -= float(np.minimum(unclipped, clipped)[item["mask"]].sum()) / count
        # d loss / d logprob: the unclipped term's, where it is the minimum (a clipped one has no gradient).
        grad = np.where(item["mask"] & (unclipped <= clipped), -unclipped / count, 0.0)
        grad_logits = -probs * grad[:, None]  # d logprob / d logits = onehot(next) - softmax
        grad_logits[np.arange(len(grad)), x[1:]] += grad
        grad_out += hidden.T @ grad_logits
        np.add.at(grad_embed, x[:-1], grad_logits @ model.out.T)
    return loss, grad_embed, grad_out


def weighted_reward(model: Bigram, batch: list[dict], rows: list[dict]) -> float:
    """The rewards weighted by how likely the model finds each row's own tokens (softmax of their mean logprob):
    the reward the policy leans towards, which the update should raise."""
    scores = np.array([model.forward(item["ids"])[0][item["mask"]].mean() if item["mask"].any() else -np.inf
                       for item in batch])
    weights = np.exp(scores - scores.max())
    return float(weights @ np.array([row["reward"] for row in rows]) / weights.sum())


def main(path: str) -> None:
    with open(path, encoding="utf-8") as file:
        rows = [json.loads(line) for line in file if line.strip()]
    model = Bigram({token for row in rows for token in row["input_ids"]})
    batch = prepare(model, rows)
    print(f"rows {len(rows)}, tasks {len({item['task'] for item in batch})}, "
          f"trained tokens {sum(int(item['mask'].sum()) for item in batch)}, "
          f"mean reward {np.mean([row['reward'] for row in rows]):.3f}")
    before = loss_and_grads(model, batch)[0], weighted_reward(model, batch, rows)
    for task in sorted({item["task"] for item in batch}):  # one epoch: a step per task's group
        _, grad_embed, grad_out = loss_and_grads(model, [item for item in batch if item["task"] == task])
        model.embed -= LR * grad_embed
        model.out -= LR * grad_out
    after = loss_and_grads(model, batch)[0], weighted_reward(model, batch, rows)
    for name, (loss, reward) in (("before", before), ("after", after)):
        print(f"{name}: loss {loss:.6f}, likelihood-weighted reward {reward:.6f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/grpo_tiny.py DATASET.jsonl")
    main(sys.argv[1])
