"""The preflight on an endpoint that cannot be reached: a refused connection or an unknown host stops the run with
exit status 2 and a line naming the endpoint (its credentials masked) and the cause, before anything is written.
Neither is retried by any of the preflight's probes, the agent's tool-call check included (a newcomer who forgot
to start a server hears so at once; during a run the same failure is retried within the budget, as
tests/llm/test_client.py shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.cli import main
from occubench.testing import MockLLMServer
from tests.llm.rawserver import closed_port


# The closed port is found when the test runs: a parameter made at collection would differ between test workers.
@pytest.mark.parametrize(("host", "cause"), [("127.0.0.1:{closed}", "connection refused"),
                                             # RFC 2606: never resolves, and the resolver says so locally
                                             ("endpoint.invalid", "unknown host")])
def test_an_unreachable_endpoint_is_named_by_the_preflight(host: str, cause: str, small_data: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    host = host.format(closed=closed_port())
    url = f"http://user:hunter22@{host}/v1"
    status = main(["run", "--agent-model", "m", "--world-model", "m", "--limit", "1", "--base-url", url,
                   "--api-key", "k", "--data-dir", str(small_data), "--output-dir", str(tmp_path / "out")])
    shown = capsys.readouterr()
    assert status == 2
    assert "Traceback" not in shown.err and "hunter22" not in shown.out + shown.err
    [line] = shown.err.strip().splitlines()
    assert f"http://user:<redacted>@{host}/v1" in line and cause in line
    assert not (tmp_path / "out").exists()  # a failed preflight leaves nothing behind


def test_credentials_in_the_url_reach_server_detection_and_no_byte_printed(small_data: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # Detection reads /models itself (urllib), where credentials in the URL are no part of the host name.
    with MockLLMServer(llama_cpp=True) as server:
        url = server.base_url.replace("http://", "http://user:hunter22@")
        status = main(["run", "--agent-model", "m", "--world-model", "m", "--limit", "1", "--base-url", url,
                       "--api-key", "k", "--data-dir", str(small_data), "--output-dir", str(tmp_path / "out")])
    shown = capsys.readouterr()
    assert status == 0, shown.err
    printed = "".join((shown.out + shown.err).split())  # as rich folded it
    assert "Serverprofilellama.cpp(owned_bymeinhttp://user:<redacted>@" in printed
    assert "hunter22" not in shown.out + shown.err
