"""Text a model, a world or a data folder wrote is read in time linear in its length (issue 43, after finding 3).

Each input below took a regular expression of the harness minutes to hours (quadratic backtracking, holding the GIL,
so every episode of a run stalled with it). Each is read here in a process of its own that must finish within a
generous deadline, and comes out as an ordinary input of its kind would. No test measures time otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from occubench.llm import LLMClient
from occubench.synth.executable.parts import function_problems
from occubench.testing import MockLLMServer
from occubench.workplace.people import Message
from occubench.workplace.scoring import checkpoint_met
from occubench.workplace.world import Outcome

#: A model's reply can be megabytes long; what is written is cut at 1 MB (occubench.util.jsonsafe), not what is read.
MEGABYTE = 1_000_000
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
CALL = '<tool_call>{"name": "lookup", "arguments": {"id": "X-1"}}</tool_call>'


def in_child(code: str, payload: Any) -> Any:
    """What ``code`` prints as JSON, given ``payload`` as JSON on its stdin, run in a process of its own that must
    finish within 30 s: were a regular expression to backtrack, it would hold that process's GIL, not this one's."""
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=30, check=True)
    return json.loads(done.stdout)


_TAGGED = """
import json, sys
from occubench.llm import extract_tagged_json
try:
    print(json.dumps(extract_tagged_json(json.load(sys.stdin), "o")))
except ValueError:
    print(json.dumps("refused"))
"""


@pytest.mark.parametrize("reply, read", [
    ('<o>{"a":' + " " * MEGABYTE + "1}</o>", {"a": 1}),  # took the code-fence pattern about 12 minutes
    ('<o>```json\n{"a":' + " " * MEGABYTE + "1}\n```</o>", {"a": 1}),
    # An open string of escaped quotes among 300 brackets: the nesting check's string pattern took about 30 minutes.
    ("<o>" + "[" * 300 + '"' + '\\"' * (MEGABYTE // 2) + "</o>", "refused"),
], ids=["spaces", "spaces in a fence", "escaped quotes"])
def test_a_simulator_or_judge_reply_with_a_megabyte_of_spaces_or_escaped_quotes_is_read_promptly(
        reply: str, read: Any) -> None:
    assert in_child(_TAGGED, reply) == read


_CHAT = """
import json, sys
from occubench.llm import LLMClient
from occubench.testing import MockLLMServer
content = json.load(sys.stdin)
tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
with MockLLMServer(lambda request, index: content) as server:
    [reply] = LLMClient("k", server.base_url).chat("m", [{"role": "user", "content": "hi"}], tools=tools).replies
print(json.dumps({"content": reply.content, "calls": [[c.id, c.name, c.arguments] for c in reply.tool_calls],
                  "reasoning": reply.reasoning}))
"""


def test_a_reply_with_a_megabyte_of_spaces_in_its_blocks_is_read_promptly() -> None:
    # Spaces then more text inside a <tool_call> block: the block pattern took over an hour on this.
    content = "<think>plan" + " " * MEGABYTE + "more</think>Calling.<tool_call>x" + " " * MEGABYTE + "y</tool_call>"
    reply = in_child(_CHAT, content + CALL)
    assert reply["calls"] == [["text_call_1", "lookup", '{"id": "X-1"}']]  # the unreadable block is no call
    assert reply["content"] == "Calling."
    assert reply["reasoning"] == "plan" + " " * MEGABYTE + "more"


@pytest.mark.parametrize("content, expected", [
    ("<think>\nfirst\n</think>\n\nAnswer.", ("Answer.", [], "first")),
    ("<think>cut short", ("", [], "cut short")),
    (f"Calling.\n{CALL}\n<tool_call>\nnot json\n</tool_call>", ("Calling.", [["text_call_0", "lookup"]], None)),
    ('<tool_call>\n {"name": "lookup", "parameters": {"id": 2}}  \n', ("", [["text_call_0", "lookup"]], None)),
    ("<think>a</think>b<think>c</think>" + CALL + CALL, ("b", [["text_call_0", "lookup"], ["text_call_1", "lookup"]],
                                                         "a\nc")),
    ("No call: <tool_call>nothing readable</tool_call>", ("No call: <tool_call>nothing readable</tool_call>", [],
                                                          None)),
])
def test_reasoning_and_text_tool_calls_are_read_from_a_reply(content: str, expected: tuple[Any, ...]) -> None:
    with MockLLMServer(lambda request, index: content) as server:
        [reply] = LLMClient("k", server.base_url).chat("m", [{"role": "user", "content": "hi"}], tools=TOOLS).replies
    assert (reply.content, [[c.id, c.name] for c in reply.tool_calls], reply.reasoning) == expected


_TOOL = """
import json, sys
from occubench.synth.executable.parts import function_problems
print(json.dumps(function_problems(json.load(sys.stdin), "get_case", ("db",), tool=True)))
"""


def tool_source(args: str) -> str:
    """A tool of a synthesized world whose docstring's ``Args:`` section is ``args``."""
    return f'def get_case(db, case_id: str) -> str:\n    """Get a case.\n\n    Args:{args}\n    """\n' \
           "    return case_id\n"


def test_a_synthesized_tool_whose_docstring_holds_a_run_of_blank_lines_is_checked_promptly() -> None:
    # Within the 200,000 characters a part may have: the Args: pattern, tried at each blank line and failing at the
    # parenthesis, took about 5 minutes on these lines.
    blank_lines = "\n" * 190_000 + "        (that is all)"
    assert in_child(_TOOL, tool_source("\n        case_id: the case." + blank_lines)) == []
    assert in_child(_TOOL, tool_source("\n        other: not a parameter." + blank_lines))  # case_id still missing


@pytest.mark.parametrize("args, described", [
    ("\n        case_id: the case.", True),
    ("\n        case_id (str): the case.", True),
    ("\n        case_id (str,\n            a code): the case.", True),
    (" case_id: on the Args: line.", True),
    ("\n\n    case_id: after a blank line, unindented.", True),
    ("\n        db: the database.\n    case_id: unindented, after a line that is not blank.", False),
    ("\n        case_id the case.", False),
    ("\n        case_id (str) the case.", False),
])
def test_parameters_are_described_under_args(args: str, described: bool) -> None:
    problems = function_problems(tool_source(args), "get_case", ("db",), tool=True)
    assert (problems == []) is described, problems


_CHECKPOINT = """
import json, sys
from datetime import datetime
from pathlib import Path
from occubench.workplace.people import Message
from occubench.workplace.scoring import checkpoint_met
from occubench.workplace.world import Outcome
text, values = json.load(sys.stdin)
at = datetime(2025, 10, 1, 9)
env = Outcome(Path(), [Message("me", "ana", text, at)])
print(json.dumps([checkpoint_met({"kind": "message", "to": "ana", "values": [value]}, env, at)
                  for value in values]))
"""


def test_a_long_value_in_a_long_message_is_scored_promptly() -> None:
    # A day file's 1 MB value against a 2 MB message: the whole-token pattern compared most of the value at each
    # word of the message (several minutes).
    text = "a " * MEGABYTE + "b"
    values = ["a " * (MEGABYTE // 2) + "x", "a " * (MEGABYTE // 2) + "b", "a" * MEGABYTE]
    assert in_child(_CHECKPOINT, [text, values]) == [False, True, False]


@pytest.mark.parametrize("text, value, met", [
    ("Sent: SKU-1,80 and more", "SKU-1,8", False),
    ("ref xa-a-a done", "a-a", True),  # the first occurrence is glued to x, the overlapping second stands alone
    ("xa-a-ab", "a-a", False),
    ("total 1,000. ok", "1000", True),
    ("total 1,000.5", "1000", False),
    ("v1.1.1.1", "1.1", False),
    ("aaaa aaa", "aaa", True),
    ("", "", True),
])
def test_values_are_found_as_whole_tokens_wherever_they_overlap(text: str, value: str, met: bool) -> None:
    at = datetime(2025, 10, 1, 9)
    outcome = Outcome(Path(), [Message("me", "ana", text, at)])
    assert checkpoint_met({"kind": "message", "to": "ana", "values": [value]}, outcome, at) is met
