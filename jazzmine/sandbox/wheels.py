"""Fetch a sandbox's dependencies as wheels on the host and unpack them into a site directory.

The image build never reaches a package registry: TLS from inside containers fails here and
air-gapped teams need the same path. `pip download` runs on the host with the host's pip
configuration (index, proxies, certificates, find-links), and wheels are cached per
requirement set.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from .errors import BuildError

LogFn = Callable[[str], None]
_MISSING = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the "
    r"requirement)\s+(\S+)"
)


def requirements_key(requirements: list[str]) -> str:
    """Return 16 hex chars naming a requirement set (order-insensitive)."""
    return hashlib.sha256(json.dumps(sorted(requirements)).encode()).hexdigest()[:16]


def download_wheels(requirements: list[str], cache_dir: Path, log: LogFn) -> Path:
    """Return a directory holding wheels for the requirements, downloading them once."""
    target = cache_dir / "wheels" / requirements_key(requirements)
    if (target / ".complete").exists():
        log(f"wheels: reusing cached wheels for {', '.join(requirements)}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="download-", dir=target.parent))
    command = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--dest",
               str(staging), "--progress-bar", "off", *requirements]  # fmt: skip
    log(f"wheels: pip download {' '.join(requirements)}")
    output: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line.rstrip())
            log(f"pip: {line.rstrip()}")
    if process.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        text = "\n".join(output)
        match = _MISSING.search(text)
        package = match.group(1) if match else ", ".join(requirements)
        raise BuildError(
            step="download dependencies",
            package=package,
            message=f"pip download failed for {package} (exit {process.returncode})",
            log_tail=output[-15:],
        )
    (staging / ".complete").write_text("\n".join(requirements) + "\n")
    if target.exists():  # another build finished the same set meanwhile
        shutil.rmtree(staging, ignore_errors=True)
    else:
        staging.rename(target)
    return target


def _is_pure(wheel: zipfile.ZipFile, filename: str) -> bool:
    """Tell whether a wheel is pure Python (platform tag 'any' and purelib root)."""
    platform = filename[: -len(".whl")].split("-")[-1]
    if platform != "any":
        return False
    for name in wheel.namelist():
        if name.endswith(".dist-info/WHEEL"):
            text = wheel.read(name).decode("utf-8", "replace")
            return "Root-Is-Purelib: true" in text
    return False


def unpack_wheels(wheel_dir: Path, site_dir: Path, log: LogFn) -> list[str]:
    """Unpack pure-Python wheels into `site_dir`; refuse compiled ones by name."""
    site_dir.mkdir(parents=True, exist_ok=True)
    installed = []
    for path in sorted(wheel_dir.glob("*.whl")):
        with zipfile.ZipFile(path) as wheel:
            if not _is_pure(wheel, path.name):
                package = path.name.split("-")[0]
                raise BuildError(
                    step="install dependencies",
                    package=package,
                    message=(
                        f"{path.name} contains compiled code; sandbox images install "
                        "pure-Python wheels only for now"
                    ),
                )
            for member in wheel.infolist():
                _extract(wheel, member, site_dir)
        installed.append(path.name)
        log(f"install: {path.name}")
    return installed


def _extract(wheel: zipfile.ZipFile, member: zipfile.ZipInfo, site_dir: Path) -> None:
    """Extract one wheel member, mapping `*.data/purelib|platlib` into the site root."""
    parts = member.filename.split("/")
    if parts[0].endswith(".data"):
        if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
            return  # scripts, headers and data files have no use in a sandbox
        parts = parts[2:]
    relative = Path(*parts)
    if relative.is_absolute() or ".." in relative.parts:
        raise BuildError(step="install dependencies", package=wheel.filename or "?",
                         message=f"unsafe path in wheel: {member.filename}")  # fmt: skip
    destination = site_dir / relative
    if member.is_dir():
        destination.mkdir(parents=True, exist_ok=True)
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    with wheel.open(member) as source, open(destination, "wb") as target:
        shutil.copyfileobj(source, target)
