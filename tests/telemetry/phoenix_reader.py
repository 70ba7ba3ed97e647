"""Reads what an Arize Phoenix server stored through Phoenix's own client (``phoenix.client.Client``); run by the
phoenix peer's Python with ``-I`` (never imported by the tests, which cannot import phoenix; isolated, so this folder,
whose phoenix.py would shadow the package, is not on its path). Importing the client takes seconds, so one reader
answers many requests.

Argument: the server's base URL. Reads requests on stdin, one JSON object a line, and answers each with one line of
JSON on stdout:

- ``{"projects": true}``: ``{"projects": [{"name", "id", "description"}...]}``, every project (``projects.list``).
- ``{"spans": PROJECT, "trace_ids": [...] or null}``: ``{"spans": [SPAN...]}``, every span stored in the project
  (of those traces only, if given; ``spans.get_spans``, page after page), or ``{"spans": null}`` while the project
  does not exist. A SPAN is ``{"trace_id", "span_id", "parent_id" (null for a root), "name", "kind", "status",
  "status_message", "start_time", "end_time", "attributes", "events": [{"name", "timestamp", "attributes"}...]}``:
  the client's span with its context lifted up, ``kind`` its ``span_kind`` (OpenInference's: LLM, TOOL, CHAIN...,
  UNKNOWN when none), ``status`` its ``status_code`` (OK, ERROR, UNSET), ``attributes`` and each event's as the
  client gives them: one flat mapping of dotted names to values (lists of scalars stay lists).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import httpx
from phoenix.client import Client

#: More than any test stores in one project; the client pages through them.
LIMIT = 1_000_000


def span(found: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace_id": found["context"]["trace_id"],
        "span_id": found["context"]["span_id"],
        "parent_id": found.get("parent_id"),
        "name": found["name"],
        "kind": found["span_kind"],
        "status": found["status_code"],
        "status_message": found.get("status_message", ""),
        "start_time": found["start_time"],
        "end_time": found["end_time"],
        "attributes": dict(found.get("attributes") or {}),
        "events": [{"name": event["name"], "timestamp": event["timestamp"],
                    "attributes": dict(event.get("attributes") or {})} for event in found.get("events") or []],
    }


def answer(client: Client, request: dict[str, Any]) -> dict[str, Any]:
    if request.get("projects"):
        return {"projects": [dict(project) for project in client.projects.list()]}
    try:
        found = client.spans.get_spans(project_identifier=request["spans"], trace_ids=request.get("trace_ids"),
                                       limit=LIMIT)
    except httpx.HTTPStatusError as error:
        if error.response.status_code == 404:  # no such project yet: nothing sent to it has been stored
            return {"spans": None}
        raise
    return {"spans": [span(dict(s)) for s in found]}


def main() -> None:
    client = Client(base_url=sys.argv[1])
    for line in sys.stdin:
        print(json.dumps(answer(client, json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
