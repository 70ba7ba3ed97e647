"""Whether a simulated world answered a call as the real system did: cheap checks first, a judge only when needed.

1. **equal**: the two observations are the same once normalized (key order, list order of records, 1 vs 1.0,
   surrounding spaces) — they agree.
2. **key fields**: they differ where no judge is needed — one is an error and the other not, or errors of different
   kinds (``wrong_error``), or one holds record ids the other does not (``invented_records``, ``missing_records``).
3. **judge**: otherwise (the same records, other values or shapes) the verifier model says whether they carry the
   same information. When they do not, the kind is ``format_drift`` (the same values in another shape),
   ``missed_state_change`` (a read after a write of the episode: the simulator did not keep the change) or
   ``wrong_values``. A judge that gives no usable answer leaves the call undecided (``judge_error``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from occubench.core.environment import JSONObject
from occubench.llm import Model
from occubench.llm.ask import aask_json
from occubench.llm.parsing import extract_tagged_json

TAG = "agreement"
KINDS = ("invented_records", "missing_records", "wrong_error", "missed_state_change", "wrong_values",
         "format_drift")

_JUDGE = f"""You compare two answers to one tool call: the real system's and a simulator's that imitates it. They \
agree when they carry the same information for the agent that made the call: the same records, the same values, \
the same outcome (a success or the same refusal). Key order, the order of records in a list, number formatting and \
wording of free text do not matter; a missing, added or different record, field value or outcome does.
Reply with one JSON object between <{TAG}> and </{TAG}> tags: {{"equivalent": true or false, "reason": "<one \
sentence>"}}."""


@dataclass(frozen=True)
class Agreement:
    #: None when the judge could not decide.
    agree: bool | None
    #: "equal", "key_fields", "judge" or "judge_error".
    by: str
    #: One of :data:`KINDS` when they disagree.
    kind: str | None = None
    reason: str = ""


def normalized(value: Any) -> Any:
    """``value`` with what carries no information removed: key order, the order of a list's records, the type of a
    whole number, surrounding spaces."""
    if isinstance(value, dict):
        return {str(key): normalized(item) for key, item in sorted(value.items(), key=lambda pair: str(pair[0]))}
    if isinstance(value, list):
        items = [normalized(item) for item in value]
        return sorted(items, key=_canonical) if all(isinstance(item, dict) for item in items) else items
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip()
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def record_ids(value: Any) -> set[str]:
    """The identifiers ``value`` names: values of keys ``id`` or ending in ``_id``, wherever they are."""
    found: set[str] = set()
    for key, item in _pairs(value):
        if (key == "id" or key.endswith("_id")) and isinstance(item, (str, int)) and not isinstance(item, bool):
            found.add(str(item))
    return found


def _pairs(value: Any) -> Iterator[tuple[str, Any]]:
    stack = [value]
    while stack:  # iterative: a simulator's answer may be nested deeper than the recursion limit
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                yield str(key), child
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


def _leaves(value: Any) -> Counter[str]:
    stack, leaves = [value], Counter[str]()
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            leaves[_canonical(normalized(item))] += 1
    return leaves


def cheap(simulated: JSONObject, real: JSONObject) -> Agreement | None:
    """The verdict of the cheap checks (1 and 2 of the module docstring); None when a judge must decide."""
    if normalized(simulated) == normalized(real):
        return Agreement(True, "equal")
    if ("error" in simulated) != ("error" in real) or simulated.get("error") != real.get("error"):
        return Agreement(False, "key_fields", "wrong_error", "one is a refusal and the other not, or another one")
    simulated_ids, real_ids = record_ids(simulated), record_ids(real)
    if invented := simulated_ids - real_ids:
        return Agreement(False, "key_fields", "invented_records", f"the simulator named {_few(invented)}")
    if missing := real_ids - simulated_ids:
        return Agreement(False, "key_fields", "missing_records", f"the simulator left out {_few(missing)}")
    return None


def _few(ids: set[str]) -> str:
    shown = sorted(ids)[:5]
    return ", ".join(shown) + (f" and {len(ids) - len(shown)} more" if len(ids) > len(shown) else "")


async def acompare(simulated: JSONObject, real: JSONObject, *, tool: str, arguments: str, after_write: bool,
                   judge: Model | None) -> Agreement:
    """How ``simulated`` compares with ``real`` (see the module docstring); ``after_write``: an earlier call of the
    episode changed the state. Without a ``judge``, what the cheap checks leave open is undecided."""
    found = cheap(simulated, real)
    if found is not None:
        return found
    if judge is None:
        return Agreement(None, "judge_error", reason="no judge model (--verifier-model) to decide")
    messages = [{"role": "system", "content": _JUDGE}, {"role": "user", "content": (
        f"Tool: {tool}\nArguments: {arguments}\n\n"
        f"Real system's answer:\n```json\n{json.dumps(real, ensure_ascii=False, indent=1)}\n```\n\n"
        f"Simulator's answer:\n```json\n{json.dumps(simulated, ensure_ascii=False, indent=1)}\n```")}]
    parsed = await aask_json(judge, messages, _verdict, reasks=2, label="[TWIN] agreement",
                             correction=lambda problems: "Your reply could not be used: " + "; ".join(problems)
                             + f". Reply again with the object between <{TAG}> and </{TAG}>.")
    if parsed.value is None:
        return Agreement(None, "judge_error", reason="; ".join(parsed.problems))
    equivalent, reason = parsed.value
    if equivalent:
        return Agreement(True, "judge", reason=reason)
    kind = "format_drift" if _leaves(simulated) == _leaves(real) else \
        "missed_state_change" if after_write else "wrong_values"
    return Agreement(False, "judge", kind, reason)


def _verdict(reply: str | None) -> tuple[bool, str]:
    found = extract_tagged_json(reply or "", TAG)
    if not isinstance(found, dict) or not isinstance(found.get("equivalent"), bool):
        raise ValueError(f'no <{TAG}> object with "equivalent": true or false')
    return found["equivalent"], str(found.get("reason", ""))[:500]
