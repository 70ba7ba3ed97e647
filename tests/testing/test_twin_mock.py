"""The mock's twin roles, through a real MockLLMServer, the real openai SDK and the simulated environment: a world-model
prompt naming an executable world is answered by that world (corrupted at a seeded share of calls), and the
agreement judge compares two answers."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import openai
import pytest

from occubench.core.environment import JSONObject
from occubench.executable.environment import ExecutableEnvironment
from occubench.executable.registry import builtin_worlds, load_world
from occubench.executable.world import Call, World
from occubench.simulated import SimulatedEnvironment, create_client
from occubench.simulated.config import WorldModelConfig
from occubench.testing import MockLLMServer, make_scripted_responder
from occubench.testing.server import _server_from_args
from occubench.testing.twin import KINDS, draw

SHARE, SEED = 0.2, 7


def _config(world: World) -> WorldModelConfig:
    # A twin config as the contract has it: the system prompt names the world, the actions are its tools.
    prompt = f'You simulate the claims system behind the executable world "{world.name}". Answer as it would.'
    actions = [{"name": tool.name, "description": tool.spec.description, "parameters": tool.spec.parameters}
               for tool in world.tools.values()]
    return WorldModelConfig(world.name, prompt, actions, state_description={}, initial_state={})


def _simulated(server: MockLLMServer, world: World, calls: Sequence[Call], max_reasks: int = 2) -> list[JSONObject]:
    env = SimulatedEnvironment(_config(world), create_client("k", server.base_url), "twin", max_reasks=max_reasks)
    return [env.call(call.tool, dict(call.arguments)) for call in calls]


def _real(world: World, calls: Sequence[Call]) -> list[JSONObject]:
    with ExecutableEnvironment(world) as env:
        return [env.call(call.tool, dict(call.arguments)) for call in calls]


#: Reads, writes, the reads that show them, and a call the world refuses (approving a claim already approved).
CLAIM_CALLS = [Call("search_claims", {"status": "open", "category": "fire"}),
               Call("get_claim", {"claim_id": "CLM-1003"}),
               Call("assign_adjuster", {"claim_id": "CLM-1003", "adjuster_id": "ADJ-03"}),
               Call("get_claim", {"claim_id": "CLM-1003"}),
               Call("approve_claim", {"claim_id": "CLM-1003", "amount": 19500, "reason": "covered fire damage"}),
               Call("approve_claim", {"claim_id": "CLM-1003", "amount": 19500, "reason": "again"}),
               Call("issue_payment", {"claim_id": "CLM-1003"}),
               Call("get_claim", {"claim_id": "CLM-1003"})]
REFUSED = 5


def test_share_zero_is_the_real_world_call_for_call() -> None:
    world = load_world("insurance_claims")
    with MockLLMServer(make_scripted_responder(twin=0.0)) as server:
        simulated = _simulated(server, world, CLAIM_CALLS)

    assert simulated == _real(world, CLAIM_CALLS)
    # The writes show in the reads after them, and the refused call is answered as the world refuses it.
    assert simulated[1]["adjuster_id"] is None and simulated[3]["adjuster_id"] == "ADJ-03"
    assert simulated[REFUSED]["error"] == "tool_error"
    assert simulated[-1]["status"] == "paid"
    assert len(server.requests) == len(CLAIM_CALLS)


def test_re_asks_after_unparsable_answers_replay_the_same_episode() -> None:
    world = load_world("insurance_claims")
    with MockLLMServer(make_scripted_responder(malformed_rate=0.5, twin=0.0, seed=1)) as server:
        simulated = _simulated(server, world, CLAIM_CALLS, max_reasks=20)
    assert simulated == _real(world, CLAIM_CALLS)
    assert len(server.requests) > len(CLAIM_CALLS)  # some answers were asked again


def test_share_one_gets_every_call_wrong_and_a_refusal_answered_as_done() -> None:
    world = load_world("insurance_claims")
    with MockLLMServer(make_scripted_responder(twin=1.0)) as server:
        simulated = _simulated(server, world, CLAIM_CALLS)
    real = _real(world, CLAIM_CALLS)

    assert all(seen != truth for seen, truth in zip(simulated, real))
    assert "error" not in simulated[REFUSED] and simulated[REFUSED]["claim_id"] == "CLM-1003"
    assert {_kind(truth, seen) for seen, truth in zip(simulated, real)} <= set(KINDS)


def _references(share: float, seed: int) -> list[tuple[str, int, JSONObject, JSONObject, JSONObject]]:
    """Every built-in world's reference solutions played against the twin: (world, position, action, real answer,
    twin answer) per call."""
    played = []
    with MockLLMServer(make_scripted_responder(twin=share, seed=seed)) as server:
        for world in builtin_worlds():
            for task in world.tasks:
                pairs = zip(_real(world, task.reference), _simulated(server, world, task.reference))
                played += [(world.name, position, {"name": call.tool, "arguments": dict(call.arguments)}, real, seen)
                           for position, (call, (real, seen)) in enumerate(zip(task.reference, pairs))]
    return played


@pytest.fixture(scope="module")
def played() -> list[tuple[str, int, JSONObject, JSONObject, JSONObject]]:
    return _references(SHARE, SEED)


def test_the_hash_chooses_which_calls_are_corrupted(played: list) -> None:
    corrupted = [i for i, (_, _, _, real, seen) in enumerate(played) if seen != real]
    chosen = [i for i, (world, position, action, _, _) in enumerate(played)
              if draw(SEED, world, position, action).number < SHARE]

    # Exactly the drawn calls differ, so a corruption never equals the real answer, and the calls after one (later
    # in the same episode, replayed from the actions) are answered truly.
    assert corrupted == chosen
    n = len(played)
    assert n > 150
    assert abs(len(chosen) - SHARE * n) <= 4 * math.sqrt(n * SHARE * (1 - SHARE))


def test_every_kind_of_corruption_occurs_and_is_what_it_says(played: list) -> None:
    kinds = [_kind(real, seen) for _, _, _, real, seen in played if seen != real]
    assert set(kinds) == set(KINDS)


def _kind(real: JSONObject, seen: JSONObject) -> str:
    """Which corruption turned ``real`` into ``seen``, checking that it changed nothing else."""
    if ("error" in real) != ("error" in seen):
        return "wrong_error"
    before, after = _leaves(real), _leaves(seen)
    if before.keys() == after.keys():
        changed = [path for path in before if before[path] != after[path]]
        assert len(changed) == 1 and not _is_id(changed[0][-1]), (real, seen)
        return "wrong_values"
    # One record more at the end of a list, shaped like its neighbours, under an id the answer did not hold.
    lists = _lists(real)
    (grown,) = [path for path, items in _lists(seen).items()
                if path in lists and len(items) == len(lists[path]) + 1]
    records = _at(seen, grown)
    assert records[:-1] == lists[grown] and records[-1].keys() == records[0].keys()
    assert {json.dumps(v) for k, v in records[-1].items() if _is_id(k)} - \
        {v for path, v in before.items() if _is_id(path[-1])}
    assert {path: v for path, v in after.items() if path[:len(grown)] != grown} == \
        {path: v for path, v in before.items() if path[:len(grown)] != grown}
    return "invented_records"


def _is_id(key: object) -> bool:
    return key == "id" or str(key).endswith("_id")


def _leaves(value: Any, path: tuple = ()) -> dict[tuple, str]:
    """Every scalar (or empty container) inside ``value``, as JSON, by its path."""
    if isinstance(value, dict) and value:
        return {p: v for key, item in value.items() for p, v in _leaves(item, (*path, key)).items()}
    if isinstance(value, list) and value:
        return {p: v for index, item in enumerate(value) for p, v in _leaves(item, (*path, index)).items()}
    return {path: json.dumps(value)}


def _lists(value: Any, path: tuple = ()) -> dict[tuple, list]:
    """Every list inside ``value``, by its path."""
    found = {path: value} if isinstance(value, list) else {}
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in children:
        found.update(_lists(item, (*path, key)))
    return found


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def test_the_same_seed_corrupts_the_same_calls_and_another_seed_others(played: list) -> None:
    assert _references(SHARE, SEED) == played
    other = _references(SHARE, SEED + 1)
    assert [seen != real for *_, real, seen in other] != [seen != real for *_, real, seen in played]


def test_without_twin_mode_a_twin_prompt_is_any_world_request() -> None:
    world = load_world("insurance_claims")
    with MockLLMServer(make_scripted_responder()) as server:
        (observation,) = _simulated(server, world, [Call("get_claim", {"claim_id": "CLM-1003"})])
    assert observation.keys() == {"tool", "status", "result_id"}


def _client(server: MockLLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=5)


@pytest.mark.parametrize(("system", "messages", "refusal"), [
    ('Simulate the executable world "no_such_world". <predicted_observation>',
     [{"role": "user", "content": '{"name": "get_claim", "arguments": {}}'}], "unknown environment 'no_such_world'"),
    ('Simulate the executable world "insurance_claims". <predicted_observation>',
     [{"role": "user", "content": '[2 earlier call(s) and their observations left out here to fit the context '
                                  'window; stay consistent with the state they left]\n'
                                  '{"name": "get_claim", "arguments": {"claim_id": "CLM-1003"}}'}],
     "cannot replay insurance_claims"),
])
def test_a_twin_request_that_cannot_be_replayed_fails_loudly(system: str, messages: list, refusal: str) -> None:
    with MockLLMServer(make_scripted_responder(twin=0.0)) as server:
        with pytest.raises(openai.InternalServerError, match=refusal):
            _client(server).chat.completions.create(
                model="world", messages=[{"role": "system", "content": system}, *messages])


JUDGE = "Compare the two answers. Reply <agreement>{\"equivalent\": ..., \"reason\": ...}</agreement>."


def _judged(server: MockLLMServer, real: Any, simulated: Any) -> dict:
    prompt = (f"Tool: get_claim\nArguments: {{}}\n\nReal system's answer:\n```json\n{json.dumps(real, indent=1)}\n"
              f"```\n\nSimulator's answer:\n```json\n{json.dumps(simulated, indent=1)}\n```")
    reply = _client(server).chat.completions.create(
        model="judge", messages=[{"role": "system", "content": JUDGE}, {"role": "user", "content": prompt}])
    text = reply.choices[0].message.content or ""
    assert text.startswith("<agreement>") and text.endswith("</agreement>")
    return json.loads(text.removeprefix("<agreement>").removesuffix("</agreement>"))


def test_the_agreement_judge_says_equal_answers_are_equivalent() -> None:
    with MockLLMServer(make_scripted_responder()) as server:
        same = _judged(server, {"claim_id": "CLM-1", "lines": [1, 2]}, {"lines": [1, 2], "claim_id": "CLM-1"})
        # A heading's words inside the real answer do not confuse it.
        tricky = _judged(server, {"note": "Simulator's answer: ```json {}```"}, {"note": "other"})
        differ = _judged(server, {"claim_id": "CLM-1", "amount": 10}, {"claim_id": "CLM-1", "amount": 11})
        again = _judged(server, {"claim_id": "CLM-1", "amount": 10}, {"claim_id": "CLM-1", "amount": 11})
    assert same["equivalent"] is True and differ["equivalent"] is False and tricky["equivalent"] is False
    assert again == differ and isinstance(differ["reason"], str)


def test_the_command_line_turns_twin_mode_on() -> None:
    world = load_world("insurance_claims")
    calls = [Call("get_claim", {"claim_id": "CLM-1003"})]
    with _server_from_args(["--port", "0", "--twin", "0"]) as server:
        assert _simulated(server, world, calls) == _real(world, calls)
    with pytest.raises(SystemExit):
        _server_from_args(["--twin", "1.5"])
