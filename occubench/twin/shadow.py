"""A simulated world with its real twin kept in step: every call the agent makes is answered by the simulator (what
the agent sees) and made on the real executable instance too, and the two answers are compared."""

from __future__ import annotations

from typing import Any

from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.images import deliver
from occubench.llm import Model
from occubench.twin.agreement import acompare
from occubench.util.aio import off_loop
from occubench.util.jsonsafe import dumps


class Shadow(Wrapper):
    """``simulated`` as the agent's world, ``real`` beside it. :meth:`info` holds each call's pair of answers and
    how they compare (``twin_calls``); the suite reads the real instance's state for the executable verdict."""

    def __init__(self, simulated: Environment, real: Environment, judge: Model | None) -> None:
        super().__init__(simulated)
        self.real, self.judge = real, judge
        self.calls: list[dict[str, Any]] = []
        self._writing = {spec.name for spec in real.tools() if spec.writes}
        self._changed = False  # whether a call of the episode changed the real state

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        simulated = await self.env.acall(name, arguments)
        real = await off_loop(self.real.call, name, arguments)  # a database or a sandbox worker's pipe: it blocks
        # Compared and kept in the results as an agent that takes no images gets them: without image data.
        (shown, _), (real, _) = deliver(simulated, False), deliver(real, False)
        text = dumps(arguments)
        agreement = await acompare(shown, real, tool=name, arguments=text, after_write=self._changed,
                                   judge=self.judge)
        self._changed = self._changed or (name in self._writing and "error" not in real)
        self.calls.append({"call_index": len(self.calls), "tool": name, "arguments": text, "simulated": shown,
                           "real": real, "agree": agreement.agree, "by": agreement.by, "kind": agreement.kind,
                           "reason": agreement.reason})
        return simulated

    def info(self) -> dict[str, Any]:
        return {**self.env.info(), "twin_calls": list(self.calls)}

    def close(self) -> None:
        try:
            self.env.close()
        finally:
            self.real.close()
