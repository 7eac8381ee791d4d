"""A wheel too large to download is never kept, nor a set of wheels too large together.

`pip download` had no size limit: a requirement resolving to a multi-gigabyte wheel was
written whole into the build's cache (and pip's temporary copy of it) before anything looked
at it, and stayed cached for every later build. Now pip runs under a file size limit of one
wheel's unpacked limit (`JAZZMINE_MAX_WHEEL_BYTES`) and the set it downloaded is measured
against the sandbox's (`JAZZMINE_MAX_SANDBOX_WHEELS_BYTES`) before it is cached. Random bytes
do not compress: these wheels weigh what they unpack to.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from tests.hostile_wheels import write_index

SANDBOX = "heavy"
MiB = 1024 * 1024


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An index serving a 24 MiB wheel and two of 10 MiB; limits of 16 MiB a wheel and all."""
    projects = {
        "jzheavy": {"1.0": {"jzheavy/noise.bin": os.urandom(24 * MiB)}},
        "jzhalfa": {"1.0": {"jzhalfa/noise.bin": os.urandom(10 * MiB)}},
        "jzhalfb": {"1.0": {"jzhalfb/noise.bin": os.urandom(10 * MiB)}},
    }
    url = write_index(tmp_path / "index", projects, compression=zipfile.ZIP_DEFLATED)
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_BYTES", str(16 * MiB))
    monkeypatch.setenv("JAZZMINE_MAX_SANDBOX_WHEELS_BYTES", str(16 * MiB))
    return tmp_path / "cache"


def stage(dependencies: list[str], cache: Path, dest: Path) -> list[str]:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, dependencies=dependencies))
    return SandboxBuilder(registry, cache_dir=cache).stage(SANDBOX, dest)  # the env's limits


def kept(cache: Path) -> list[str]:
    """Every file the download left in the cache."""
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())


def test_one_wheel_larger_than_a_wheels_limit_stops_its_download(cache, tmp_path):
    with pytest.raises(BuildError) as caught:
        stage(["jzheavy==1.0"], cache, tmp_path / "runtime")
    assert caught.value.step == "download dependencies"
    assert caught.value.package == "jzheavy-1.0-py3-none-any.whl"
    text = str(caught.value)
    assert "JAZZMINE_MAX_WHEEL_BYTES" in text and "16,777,216 bytes" in text, text
    assert kept(cache) == []
    assert list((tmp_path / "runtime" / "site").iterdir()) == []


def test_wheels_larger_together_than_a_sandboxs_limit_are_not_kept(cache, tmp_path):
    # One of them alone is fine.
    assert len(stage(["jzhalfa==1.0"], cache, tmp_path / "one")) == 1
    before = kept(cache)

    with pytest.raises(BuildError) as caught:
        stage(["jzhalfa==1.0", "jzhalfb==1.0"], cache, tmp_path / "both")
    assert caught.value.step == "download dependencies"
    text = str(caught.value)
    assert "JAZZMINE_MAX_SANDBOX_WHEELS_BYTES" in text and "16,777,216 bytes" in text, text
    assert "jzhalfa-1.0-py3-none-any.whl" in text and "jzhalfb-1.0-py3-none-any.whl" in text
    assert kept(cache) == before  # the first set's cache only
