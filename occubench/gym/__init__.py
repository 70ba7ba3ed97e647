"""Every suite's tasks as Gymnasium environments, for RL trainers (``pip install -e ".[gym]"``).

    import gymnasium
    import occubench.gym  # registers occubench/<suite>-v0 for every installed suite

    env = gymnasium.make("occubench/executable-v0", task_id="clinic_scheduling/book_urgent_cardiology")
    instruction, info = env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step({"name": "list_doctors", "arguments": {}})

``gymnasium.make("occubench.gym:occubench/executable-v0", ...)`` imports this package itself. See
:mod:`occubench.gym.env` for the actions, observations, rewards and errors, and :mod:`occubench.gym.policy` for a
policy that samples from an OpenAI-compatible endpoint and keeps its tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.gym.registration import register_envs
from occubench.util.lazy import lazy_exports

#: Public name → the module that defines it.
_EXPORTS = {
    "Answer": "occubench.gym.env", "AnyText": "occubench.gym.env", "Call": "occubench.gym.env",
    "OccuBenchEnv": "occubench.gym.env", "action_tokens": "occubench.gym.env", "read_action": "occubench.gym.env",
    "EndpointPolicy": "occubench.gym.policy",
    "env_id": "occubench.gym.registration", "make": "occubench.gym.registration",
    "register_envs": "occubench.gym.registration",
}

__all__ = ["Answer", "AnyText", "Call", "EndpointPolicy", "OccuBenchEnv", "action_tokens", "env_id", "make",
           "read_action", "register_envs"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

register_envs()

if TYPE_CHECKING:
    from occubench.gym.env import Answer, AnyText, Call, OccuBenchEnv, action_tokens, read_action
    from occubench.gym.policy import EndpointPolicy
    from occubench.gym.registration import env_id, make
