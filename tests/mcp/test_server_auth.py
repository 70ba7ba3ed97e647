"""`occubench serve --transport http` behind a bearer token: an address other than loopback is refused without one;
with one, every request must carry it, and the Host header must name the address served."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.testclient import TestClient

from occubench.cli import main
from occubench.mcp.server import TOKEN_VARIABLE, build_server, http_app, is_loopback
from tests.mcp.test_server import _free_port, _Slow, _wait_for_port

TOKEN = "s3cret-token"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "myhost.example"])
def test_an_address_others_reach_needs_a_token(host: str, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    # Refused before the world starts or a port is bound: the command returns rather than serving.
    assert main(["serve", "--env", "insurance_claims", "--transport", "http", "--host", host]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--host {host}" in err[0] and TOKEN_VARIABLE in err[0] and "--token-file" in err[0]


def test_loopback_is_told_apart() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.0.0.1", "example.com"]))


def test_a_served_address_checks_token_and_host() -> None:
    # Driven in-process (no port): the app `serve --host 10.1.2.3 --allowed-host bench.lan` would run.
    app = http_app(build_server(_Slow(), "test-env"), "10.1.2.3", TOKEN, ["bench.lan"])
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app, base_url="http://10.1.2.3:8200") as client:
        assert client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code == 401
        assert client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer nope"}
                           ).status_code == 401
        for host in ("10.1.2.3:8200", "bench.lan:8200"):
            assert client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **auth, "Host": host}
                               ).status_code == 200
        assert client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **auth, "Host": "evil.example:8200"}
                           ).status_code == 421


@pytest.fixture(params=["environment", "file"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """`occubench serve --env insurance_claims --transport http` on 127.0.0.1, its token from the environment
    variable or from --token-file; the MCP endpoint's URL."""
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if key != TOKEN_VARIABLE}
    argv = [sys.executable, "-m", "occubench", "serve", "--env", "insurance_claims", "--transport", "http",
            "--port", str(port)]
    if request.param == "environment":
        env[TOKEN_VARIABLE] = TOKEN
    else:
        (tmp_path / "token").write_text(TOKEN + "\n", encoding="utf-8")
        argv += ["--token-file", str(tmp_path / "token")]
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=out, env=env, cwd=tmp_path)
    try:
        _wait_for_port(process, port, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.mark.slow
def test_every_request_carries_the_token(served: str) -> None:
    with httpx.Client(trust_env=False) as http:
        assert http.post(served, json=INITIALIZE, headers=MCP_HEADERS).status_code == 401
        wrong = http.post(served, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer wrong"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        rebound = http.post(served, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}",
                                                              "Host": "evil.example"})
        assert rebound.status_code == 421  # the SDK's DNS-rebinding protection still checks the Host header

    async def tool_names() -> list[str]:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False) as http2, \
                Client(streamable_http_client(served, http_client=http2)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = anyio.run(tool_names)
    assert names and all(isinstance(name, str) for name in names)


