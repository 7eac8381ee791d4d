"""A TCP listener on loopback that counts connections: what must never be reached."""

from __future__ import annotations

import socket
import threading
import time


def http_answer(status: str, body: bytes = b"", **headers: str) -> bytes:
    """Return a whole HTTP/1.1 answer: `content_type="x"` is the header `content-type: x`."""
    lines = [f"HTTP/1.1 {status}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    lines += [f"content-length: {len(body)}", "connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Listener:
    """Accept connections on 127.0.0.1, answer any request with 200, count and record them.

    `drip`: send the answer a byte at a time, this many seconds apart (a slow peer).
    """

    def __init__(self, answer: bytes | None = None, drip: float = 0.0) -> None:
        self.accepted = 0
        self.received = b""
        self.answer = answer or http_answer("200 OK", b"secret", content_type="text/plain")
        self.drip = drip
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self._stop:
                conn.close()
                return
            self.accepted += 1
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                    if not self.drip:
                        conn.sendall(self.answer)
                        continue
                    for byte in self.answer:
                        conn.sendall(bytes([byte]))
                        time.sleep(self.drip)
                except OSError:
                    pass

    def close(self) -> None:
        self._stop = True
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=2)
