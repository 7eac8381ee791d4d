"""A package index served over HTTP on loopback, wheels that declare dependencies, and a server
that records every connection made to it (an "internal" address a dependency may name).

The index is PEP 503's simple layout, served by `http.server` in a thread, as an operator's
private index would be: pip reads it over HTTP, as it does a real one.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import functools
import hashlib
import http.server
import io
import os
import struct
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Project:
    """One version of a project: what its wheel's METADATA declares."""

    name: str
    version: str
    requires: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_bytes(project: Project) -> bytes:
    """Return a pure-Python wheel of `project`: a module, METADATA, WHEEL and RECORD."""
    name, version = project.name, project.version
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Provides-Extra: {extra}\n" for extra in project.extras)
    metadata += "".join(f"Requires-Dist: {requirement}\n" for requirement in project.requires)
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n".encode(),
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return buffer.getvalue()


def wheel_name(project: Project) -> str:
    return f"{project.name}-{project.version}-py3-none-any.whl"


def write_wheel(directory: Path, project: Project) -> Path:
    """Write the wheel of `project` into `directory`; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / wheel_name(project)
    path.write_bytes(wheel_bytes(project))
    return path


def write_simple_index(root: Path, projects: list[Project]) -> Path:
    """Write a PEP 503 index of `projects` under `root/simple`; return that directory."""
    simple = root / "simple"
    by_name: dict[str, list[Path]] = {}
    for project in projects:
        by_name.setdefault(project.name, []).append(write_wheel(simple / project.name, project))
    for name, wheels in by_name.items():
        links = "".join(f'<a href="{w.name}">{w.name}</a>\n' for w in wheels)
        (simple / name / "index.html").write_text(links)
    (simple / "index.html").write_text("".join(f'<a href="{n}/">{n}</a>\n' for n in by_name))
    return simple


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def served_index(root: Path, projects: list[Project]) -> Iterator[str]:
    """Serve a PEP 503 index of `projects` on loopback; yield its URL (…/simple/)."""
    simple = write_simple_index(root, projects)
    handler = functools.partial(_QuietFiles, directory=str(simple.parent))
    with _serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield f"http://127.0.0.1:{port}/simple/"


@dataclass
class Recorder:
    """The internal address: serves a real wheel to whoever asks, and notes every connection."""

    port: int
    seen: list[str] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"


@contextlib.contextmanager
def recording_server(wheel: bytes) -> Iterator[Recorder]:
    """Serve `wheel` at every path on loopback, recording each connection and request line.

    A connection is noted as it is accepted, before a byte is read: a client that connects
    and asks for nothing (or for metadata alone, with a range or a HEAD) is counted too.
    """
    recorder = Recorder(port=0)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recorder.seen.append(self.requestline)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(wheel)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(wheel)

        do_HEAD = do_GET

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(http.server.ThreadingHTTPServer):
        def verify_request(self, request: object, client_address: object) -> bool:
            recorder.seen.append(f"connection from {client_address}")
            return True

    with _serving(Server(("127.0.0.1", 0), Handler)) as port:
        recorder.port = port
        yield recorder


@contextlib.contextmanager
def _serving(server: http.server.ThreadingHTTPServer) -> Iterator[int]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextlib.contextmanager
def opens_of(path: Path) -> Iterator[list[int]]:
    """Watch `path` with inotify; on leaving, the list holds the number of opens and reads.

    The kernel reports every open and read of the file by any process: a file a URL names
    that was never opened was never read into anything.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    counted: list[int] = []
    try:
        if libc.inotify_add_watch(fd, os.fsencode(path), _IN_OPEN | _IN_ACCESS) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
        yield counted
        events = 0
        with contextlib.suppress(BlockingIOError):
            while data := os.read(fd, 65536):
                at = 0
                while at < len(data):  # struct inotify_event: wd, mask, cookie, len, name
                    _wd, _mask, _cookie, length = struct.unpack_from("iIII", data, at)
                    at += 16 + length
                    events += 1
        counted.append(events)
    finally:
        os.close(fd)


_IN_ACCESS = 0x1
_IN_OPEN = 0x20
