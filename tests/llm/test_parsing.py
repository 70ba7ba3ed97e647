from __future__ import annotations

import pytest

from occubench.llm import extract_tagged_json


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
