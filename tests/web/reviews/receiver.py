"""A local HTTP receiver on 127.0.0.1 that records webhook deliveries and answers as told."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    """Record every POST; answer with the next status of `statuses` (then 200)."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.arrived:
                    receiver.requests.append((dict(self.headers.items()), body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.arrived.notify_all()
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok" if status < 300 else b"not now")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, timeout: float = 15.0) -> list[tuple[dict[str, str], bytes]]:
        """Wait until `count` requests arrived and return them."""
        with self.arrived:
            assert self.arrived.wait_for(lambda: len(self.requests) >= count, timeout), (
                f"only {len(self.requests)} of {count} deliveries arrived"
            )
            return list(self.requests)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
