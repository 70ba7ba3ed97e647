"""A hostile registry on 127.0.0.1 for the hub's bound tests: a raw HTTP server whose every answer is a function of
the request the test writes (a Hub that serves a huge manifest, a registry that sends a byte now and then), and
that counts the bytes it got to send, so a test checks what was sent, not what a message says."""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

#: How a test answers a request: given (method, path), write the answer with the connection's ``send``.
Answer = Callable[[str, str, "Connection"], None]


@dataclass
class Counter:
    sent: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Connection:
    def __init__(self, sock: socket.socket, counter: Counter, stop: threading.Event) -> None:
        self.sock, self.counter, self.stop = sock, counter, stop

    def send(self, data: bytes) -> None:
        """Send ``data``; an OSError once the client is gone (or the server stops)."""
        if self.stop.is_set():
            raise OSError("the server stops")
        self.sock.sendall(data)
        with self.counter.lock:
            self.counter.sent += len(data)

    def answer(self, status: str, headers: dict[str, str], body: bytes = b"") -> None:
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.send(f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body)

    def json(self, body: bytes, *, head: bool = False) -> None:
        self.answer("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(body))},
                     b"" if head else body)

    def flood(self, total: int) -> None:
        """Send ``total`` bytes of JSON whitespace, as fast as the client takes them."""
        chunk = b" " * (1 << 20)
        while total > 0:
            self.send(chunk[:total])
            total -= len(chunk)

    def trickle(self, byte: bytes = b" ", every: float = 0.2) -> None:
        """A byte every ``every`` seconds until the client goes away: each read gets something long before any
        read timeout, and the whole never ends."""
        while True:
            self.send(byte)
            time.sleep(every)


@contextmanager
def serving(answer: Answer) -> Iterator[tuple[str, Counter]]:
    """A server on a free loopback port answering every request with ``answer``; its ``host:port`` and counter."""
    counter, stop = Counter(), threading.Event()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            reader = sock.makefile("rb")
            try:
                while True:  # keep-alive: one request after another on the connection
                    line = reader.readline(65536).decode("latin-1")
                    if not line.strip():
                        return
                    method, path = line.split()[:2]
                    length = 0
                    while (header := reader.readline(65536)) not in (b"\r\n", b"\n", b""):
                        name, _, value = header.decode("latin-1").partition(":")
                        if name.strip().lower() == "content-length":
                            length = int(value)
                    reader.read(length)
                    with counter.lock:
                        counter.requests.append((method, path))
                    answer(method, path, Connection(sock, counter, stop))
            except OSError:
                return  # the client went away

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", counter
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
