"""A loopback HTTP server on bare sockets, for what the mock server cannot do: answer with bytes no HTTP library
would send (a body cut short, garbled chunks, a reset connection), and record each request as it arrived, so two
clients' requests can be compared header by header. And a loopback port where nothing listens."""

from __future__ import annotations

import json
import socket
import socketserver
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    method: str
    #: As sent: a path and query, a whole URL (a request through a proxy) or host:port (CONNECT).
    target: str
    #: Names in lower case.
    headers: dict[str, str]
    body: bytes


#: What the server sends back to a request: the bytes, or None to reset the connection.
Answer = Callable[[Request], "bytes | None"]


def http_answer(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    """A well-formed answer, after which the connection closes."""
    lines = [f"HTTP/1.1 {status} Status", f"Content-Length: {len(body)}", "Connection: close",
             *(f"{name}: {value}" for name, value in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


COMPLETION = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": "m", "choices": [
    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}).encode()
ANSWERED = http_answer(200, COMPLETION, {"Content-Type": "application/json"})


def closed_port() -> int:
    with socket.socket() as sock:  # bound then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RawServer(socketserver.ThreadingTCPServer):
    """Serves each connection one request, in a thread of its own, and closes it."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, answer: Answer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.requests: list[Request] = []
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        super().__exit__(*exc)


class _Handler(socketserver.StreamRequestHandler):
    server: RawServer

    def handle(self) -> None:
        self.connection.settimeout(30)
        start = self.rfile.readline().decode("latin-1").split()
        if len(start) != 3:
            return
        headers = {}
        while (line := self.rfile.readline().decode("latin-1").rstrip("\r\n")):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        request = Request(start[0], start[1], headers, self.rfile.read(int(headers.get("content-length", 0))))
        self.server.requests.append(request)
        answer = self.server.answer(request)
        if answer is None:  # closed with unsent data discarded: the client sees a reset
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        else:
            self.wfile.write(answer)
