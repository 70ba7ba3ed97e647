"""Any value a model or a tool returns becomes strict JSON, so a record can always be written."""

from __future__ import annotations

import json
import math

from occubench.util.jsonsafe import MAX_DEPTH, MAX_STRING, clean_text, dumps, json_safe


def _strict(text: str) -> object:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def test_hostile_values_become_strict_json_with_markers() -> None:
    deep: list = []
    for _ in range(5_000):
        deep = [deep]
    value = {"surrogate": "a\ud800b", "nan": math.nan, "inf": -math.inf, "big": (10**100) ** 50, "deep": deep,
             "long": "x" * (MAX_STRING + 10), ("tuple", 1): {1, 2}, "ok": [1, 2.5, True, None]}
    text = dumps(value)
    text.encode("utf-8")  # no lone surrogate left
    data = _strict(text)
    assert isinstance(data, dict)
    assert data["surrogate"] == "a\ufffdb"
    assert (data["nan"], data["inf"]) == ("NaN", "-Infinity")
    assert data["big"].startswith("<integer of about 5,00") and data["big"].endswith("digits>")
    assert data["long"].endswith("…[truncated: 10 more characters]")
    assert data["ok"] == [1, 2.5, True, None]
    level = data["deep"]
    depth = 1
    while isinstance(level, list):
        level, depth = level[0], depth + 1
    assert level == f"<nested deeper than {MAX_DEPTH} levels: cut>" and depth == MAX_DEPTH


def test_plain_values_are_unchanged() -> None:
    value = {"task_id": 7, "score": 0.25, "steps": [{"name": "ñ ✓", "arguments": "{}"}], "flag": False}
    assert json_safe(value) == value
    assert clean_text("plain ✓") == "plain ✓"
