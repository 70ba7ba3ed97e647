"""What a rollout shares between its task (in the eval process) and the tool server (a process of its own)."""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from occubench_verifiers.episodes import Server, Session


class EpisodeState(vf.State):
    """The rollout's occubench episode. verifiers keeps a trace's state out of everything it writes, so the session
    (the episode's credential) and the serve token stay off disk."""

    url: str = ""
    token: str | None = None
    session: str = ""
    #: The name of the episode's answer tool (``submit``, unless the task has a tool of that name).
    submit: str = "submit"
    #: The episode's tools as the server lists them (``name``, ``description``, ``input_schema``), submit last.
    tools: list[dict[str, Any]] = Field(default_factory=list)
    #: What the server said of the verdict once the episode ended (``is_correct``, ``reward``, ``status``,
    #: ``feedback``, ``stop_reason``, ``error``, ``verdict_details``); None while it goes on.
    verdict: dict[str, Any] | None = None

    def episode(self) -> Session:
        if not self.session:
            raise RuntimeError("this rollout has no occubench episode: its task's setup did not start one")
        return Session(Server(self.url, self.token), self.session)
