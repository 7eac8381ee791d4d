"""A wheel that unpacks past its limits is refused before anything of it is written.

Wheels were unpacked whatever they held. A dependency whose wheel is a zip bomb (65 KiB
downloaded, 64 MiB of zeros unpacked; thousands of empty modules; one module two thousand
directories deep) filled the worker's disk when a bubblewrap run staged it, and the build's
context and image when Docker built it. Now each wheel's central directory is measured first,
against the operator's `JAZZMINE_MAX_WHEEL_BYTES` and `JAZZMINE_MAX_WHEEL_ENTRIES` (entries:
the files and directories it makes), and the build fails naming the wheel, the limit and the
setting, leaving no directory and no image behind.

The wheels come from a local index through the builder's real `pip download`; the builder
reads its limits from the environment, as a worker without Django does.
"""

from __future__ import annotations

import tempfile
import uuid
import zipfile
from pathlib import Path

import docker.errors
import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox import wheels as wheels_module
from jazzmine.sandbox.bwrap import stage_run_dir
from jazzmine.sandbox.workdirs import workdir_remove
from tests.hostile_wheels import ZEROS, deep_file, tiny_files, write_index

SANDBOX = "bombed"
WHEEL_BYTES = 16 * 1024 * 1024
WHEEL_ENTRIES = 1000

# {attack: (project, its files, what the error must say: the limit and its setting)}
BOMBS = {
    "one highly compressible file": (
        "jzzeros", {"jzzeros/zeros.bin": ZEROS}, ("16,777,216 bytes", "JAZZMINE_MAX_WHEEL_BYTES")
    ),
    "many tiny entries": (
        "jztiny", tiny_files(5000), ("1,000", "JAZZMINE_MAX_WHEEL_ENTRIES")
    ),
    # 34 entries in its central directory (its metadata too); over 1,500 directories on disk.
    "few entries, each many directories deep": (
        "jzwide", {f"jzwide/b{i}" + "/d" * 50 + "/x.py": b"" for i in range(30)},
        ("1,000", "JAZZMINE_MAX_WHEEL_ENTRIES"),
    ),
    # Deeper than Python's recursion limit: unpacking it raised RecursionError, and so did
    # removing what it had made, which stayed on disk.
    "one path two thousand directories deep": (
        "jzdeep", deep_file(2000), ("2,002 levels deep", "the 100 levels any wheel may nest")
    ),
}  # fmt: skip


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The operator's settings (an index serving the bombs, small limits), and a temporary
    directory of the test's own, where builds and runs make their working directories."""
    projects = {name: {"1.0": files} for name, files, _ in BOMBS.values()}
    projects["jzfine"] = {"1.0": {"jzfine/__init__.py": b"OK = 1\n"}}
    url = write_index(tmp_path / "index", projects, compression=zipfile.ZIP_DEFLATED)
    monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", url)
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_BYTES", str(WHEEL_BYTES))
    monkeypatch.setenv("JAZZMINE_MAX_WHEEL_ENTRIES", str(WHEEL_ENTRIES))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every member the builder starts to unpack."""
    calls: list[object] = []
    real = wheels_module._extract

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(wheels_module, "_extract", spy)
    return calls


def builder_of(dependencies: list[str], cache: Path, **kwargs) -> SandboxBuilder:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX, dependencies=dependencies))
    return SandboxBuilder(registry, cache_dir=cache, **kwargs)  # limits: the environment's


def refusal_checked(error: BuildError, bomb: str) -> None:
    project, _, says = BOMBS[bomb]
    wheel = f"{project}-1.0-py3-none-any.whl"
    assert (error.step, error.package) == ("install dependencies", wheel)
    text = str(error)
    assert wheel in text and all(phrase in text for phrase in says), text


@pytest.mark.parametrize("bomb", BOMBS)
def test_staging_a_bubblewrap_run_refuses_the_wheel_and_leaves_no_directory(
    bomb, tmp, tmp_path, extracted
):
    project = BOMBS[bomb][0]
    # A harmless wheel, under the same limits, stages as before.
    runtime_dir, wheels = stage_run_dir(builder_of(["jzfine==1.0"], tmp_path / "cache"), SANDBOX)
    assert (runtime_dir / "site" / "jzfine" / "__init__.py").read_bytes() == b"OK = 1\n"
    assert [line.split()[0] for line in wheels] == ["jzfine-1.0-py3-none-any.whl"]
    extracted.clear()

    # Beside it, the bomb: refused before either wheel's first member is unpacked.
    builder = builder_of(["jzfine==1.0", f"{project}==1.0"], tmp_path / "cache")
    with pytest.raises(BuildError) as caught:
        stage_run_dir(builder, SANDBOX)
    refusal_checked(caught.value, bomb)
    assert extracted == []
    workdir_remove(runtime_dir)  # the harmless run's
    assert list(tmp.glob("jazzmine-bwrap-*")) == []


@pytest.mark.parametrize("bomb", BOMBS)
def test_staging_into_a_directory_writes_nothing_of_any_wheel(bomb, tmp, tmp_path):
    dest = tmp_path / "runtime"
    builder = builder_of(["jzfine==1.0", f"{BOMBS[bomb][0]}==1.0"], tmp_path / "cache")
    with pytest.raises(BuildError) as caught:
        builder.stage(SANDBOX, dest)
    refusal_checked(caught.value, bomb)
    assert list((dest / "site").iterdir()) == []


@pytest.mark.docker
def test_the_image_build_fails_and_leaves_no_image_and_no_context(
    tmp, tmp_path, docker_client, base_image
):
    name = f"bombed-{uuid.uuid4().hex[:8]}"
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=name, dependencies=["jzzeros==1.0"]))
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path / "cache")
    tag = builder.image_tag(name)
    logs: list[str] = []
    try:
        with pytest.raises(BuildError) as caught:
            builder.ensure_image(name, on_log=logs.append)
        assert (caught.value.step, caught.value.package) == (
            "install dependencies", "jzzeros-1.0-py3-none-any.whl"
        )  # fmt: skip
        assert "JAZZMINE_MAX_WHEEL_BYTES" in str(caught.value)
        assert not any(line.startswith("Step ") for line in logs), "the engine built nothing"
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(tag)
        assert list(tmp.glob("jazzmine-build-*")) == []
    finally:
        for image in docker_client.images.list(name=f"jazzmine/sandbox-{name}"):
            docker_client.images.remove(image.id, force=True)
