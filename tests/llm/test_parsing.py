from __future__ import annotations

import pytest

from occubench.llm import extract_tagged_json
from occubench.llm.parsing import loads


@pytest.mark.parametrize("text", [
    '<o>{"a": 1}</o>',
    'thinking...\n<o>\n```json\n{"a": 1}\n```\n</o>',
    '<o>draft</o> better: <o>{"a": 1}</o>',
    '<o>{"a": 1}',                          # cut short before the closing tag
    '<o>Here it is: {"a": 1} done</o>',
])
def test_extracts_the_object(text: str) -> None:
    assert extract_tagged_json(text, "o") == {"a": 1}


@pytest.mark.parametrize("text, reason", [
    (None, "empty"),
    ('{"a": 1}', "no <o> tag"),
    ("<o>[1, 2]</o>", "not one JSON object"),
    ("<o>{a: 1}</o>", "not valid JSON"),
])
def test_reports_why_it_failed(text: str | None, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        extract_tagged_json(text, "o")


@pytest.mark.parametrize("text", [
    '<o>```\n{"a": 1}\n```</o>',
    '<o>```json{"a": 1}```</o>',
    '<o> \n```json \t\n {"a": 1} \n ``` \n</o>',
    '<o>```json\n{"a": 1}',                   # a fence cut short with the reply
    '<o>{"a": 1}\n```</o>',
])
def test_a_code_fence_around_the_object_is_dropped(text: str) -> None:
    assert extract_tagged_json(text, "o") == {"a": 1}


@pytest.mark.parametrize("text, value", [
    ('{"t": "\\\\", "u": "' + "[" * 300 + '"}', {"t": "\\", "u": "[" * 300}),  # after an escaped backslash
    ('{"t": "\\"' + "{" * 300 + '"}', {"t": '"' + "{" * 300}),  # after an escaped quote
    ('[["\\\\\\""], "' + "]" * 300 + "[" * 300 + '"]', [['\\"'], "]" * 300 + "[" * 300]),
])
def test_brackets_inside_strings_do_not_count_toward_the_nesting_bound(text: str, value: object) -> None:
    assert loads(text) == value


@pytest.mark.parametrize("text", [
    "[" * 257 + "]" * 257,
    '["a", "b\\\\", ' + "[" * 256 + "]" * 257,
    '"open' + "[" * 300,  # a string left open does not hide the brackets after it
])
def test_nesting_beyond_the_bound_is_refused_as_unreadable(text: str) -> None:
    with pytest.raises(ValueError, match="nested more than 256 levels"):
        loads(text)
