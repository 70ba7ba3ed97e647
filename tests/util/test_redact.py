"""Redaction of every credential the harness holds: the keys a run sends and the key-like variables of its
environment, which an agent program inherits and may print. None of them may reach a byte the run writes, a line it
prints or a request it sends to a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.testing import MockLLMServer
from occubench.util.redact import MASK, Redactor, environment_secrets
from tests.conftest import write_small_data

#: An outside agent that prints its whole environment: into a tool call (the world model reads it), to stderr (kept
#: with its trajectory) and to stdout (its answer, which the judge reads).
PRINTS_ITS_ENVIRONMENT = """
import asyncio, os, sys
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

dump = "\\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))

async def main():
    async with Client(streamable_http_client(sys.argv[1])) as client:
        tool = (await client.list_tools()).tools[0]
        await client.call_tool(tool.name, {name: dump for name in tool.input_schema.get("properties", {})})

asyncio.run(main())
print(dump, file=sys.stderr)
print(dump)
"""

SENT = "k1-sent-on-the-command-line-4f9c2a7e81d0"  # --api-key
INHERITED = "sk-inherited-from-the-shell-b83e6d105a2f"  # $OPENAI_API_KEY, which the run does not send
OTHER = "hf_another-providers-token-0c7d91e5a3b6"  # $HF_TOKEN


@pytest.mark.slow
def test_no_key_of_the_environment_reaches_a_file_the_terminal_or_a_model(tmp_path: Path) -> None:
    program = tmp_path / "prints.py"
    program.write_text(PRINTS_ITS_ENVIRONMENT)
    data = write_small_data(tmp_path / "data")
    environment = {**os.environ, "OPENAI_API_KEY": INHERITED, "HF_TOKEN": OTHER}
    with MockLLMServer() as server:
        done = subprocess.run(
            [sys.executable, "-m", "occubench", "run", "--suite", "occubench", "--data-dir", str(data),
             "--world-model", "world", "--verifier-model", "judge", "--api-key", SENT, "--base-url", server.base_url,
             "--agent", f"command:{sys.executable} {program} {{mcp_url}}", "--output-dir", str(tmp_path / "out"),
             "--run-name", "r", "--cache", str(tmp_path / "cache" / "responses.sqlite"), "--debug", "--limit", "1"],
            env=environment, capture_output=True, timeout=300)
        requests = [json.dumps(request) for request in server.requests]

    assert done.returncode == 0, done.stderr.decode(errors="replace")
    written = [path for folder in ("out", "cache") for path in (tmp_path / folder).rglob("*") if path.is_file()]
    assert {"results.jsonl", "context.jsonl", "args.json", "debug.log", "responses.sqlite"} <= {p.name for p in written}
    # The program's output was kept and shown to the world model and the judge, with every key masked.
    results = (tmp_path / "out" / "r" / "results.jsonl").read_text()
    assert MASK in results and "HF_TOKEN=" + MASK in results
    assert sum(MASK in request for request in requests) >= 2  # the world model's prompt and the judge's
    for secret in (SENT, INHERITED, OTHER):
        assert not [path for path in written if secret.encode() in path.read_bytes()]
        assert not [request for request in requests if secret in request]
        assert secret.encode() not in done.stdout + done.stderr


def test_which_variables_of_the_environment_are_secrets() -> None:
    environment = {
        "GITHUB_TOKEN": "ghp_0123456789", "AWS_SECRET_ACCESS_KEY": "aws/secret+value", "PGPASSWORD": "db-password",
        "AZURE_OPENAI_API_KEY_2": "azure-key-two", "HTTPS_PROXY": "http://me:proxy-password@proxy:3128",
        "DATABASE_URL": "postgres://db/x?token=query-token-1", "BROKEN_URL": "http://[::1/ not a url",
        "SSH_PRIVATE_KEY": "-----BEGIN KEY-----\nbase64-line-of-key\n-----END KEY-----",
        "SHORT_KEY": "1234567",  # too short to be told from ordinary text
        "HF_TOKEN_PATH": "/root/.cache/token", "AWS_ACCESS_KEY_ID": "AKIAIDENTIFIER", "TOKENIZERS_PARALLELISM": "false",
        "HOME": "/home/someone",
    }
    found = environment_secrets(environment)
    assert sorted(found) == sorted(["ghp_0123456789", "aws/secret+value", "db-password", "azure-key-two",
                                    "proxy-password", "query-token-1", *environment["SSH_PRIVATE_KEY"].splitlines(),
                                    environment["SSH_PRIVATE_KEY"]])


def test_a_secret_is_masked_in_a_request_body_as_json_writes_it() -> None:
    quoted = 'pass"word\\with-quotes'
    redactor = Redactor([quoted, "plain-secret-1"])
    body = json.dumps({"messages": [{"content": f"{quoted} and plain-secret-1"}]}, ensure_ascii=False).encode()
    assert json.loads(redactor.body(body)) == {"messages": [{"content": f"{MASK} and {MASK}"}]}
