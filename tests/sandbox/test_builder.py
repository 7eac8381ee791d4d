"""SandboxBuilder against the real engine: tags, reuse, rebuild on change, hardening."""

from __future__ import annotations

import uuid
import zipfile

import docker
import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox.wheels import unpack_wheels

SOURCE_V1 = "def greet(name):\n    return ToolResponse(success=True, data='hi ' + name)\n"
SOURCE_V2 = "def greet(name):\n    return ToolResponse(success=True, data='hello ' + name)\n"


def registry_with(sandbox: str, source: str, dependencies: list[str]) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=sandbox))
    registry.register_source(
        source, sandbox=sandbox, description="Greet.", dependencies=dependencies
    )
    return registry


@pytest.fixture
def sandbox_name(docker_client):
    name = f"rebuild-{uuid.uuid4().hex[:8]}"
    yield name
    for image in docker_client.images.list(name=f"jazzmine/sandbox-{name}"):
        docker_client.images.remove(image.id, force=True)


@pytest.mark.docker
def test_it_builds_once_and_rebuilds_only_on_change(docker_client, cache_dir, sandbox_name):
    logs: list[str] = []

    def build(source: str, deps: list[str]):
        registry = registry_with(sandbox_name, source, deps)
        builder = SandboxBuilder(registry, client=docker_client, cache_dir=cache_dir)
        return builder.ensure_image(sandbox_name, on_log=logs.append)

    first = build(SOURCE_V1, [])
    assert first.built and any(line.startswith("Step ") for line in logs)
    again = build(SOURCE_V1, [])
    assert (again.tag, again.built) == (first.tag, False)

    changed_code = build(SOURCE_V2, [])
    assert changed_code.built and changed_code.tag != first.tag
    assert not build(SOURCE_V2, []).built

    changed_deps = build(SOURCE_V2, ["six"])
    assert changed_deps.built and changed_deps.tag not in (first.tag, changed_code.tag)
    assert not build(SOURCE_V2, ["six"]).built
    tags = {t for image in docker_client.images.list(name=f"jazzmine/sandbox-{sandbox_name}")
            for t in image.tags}  # fmt: skip
    assert tags == {first.tag, changed_code.tag, changed_deps.tag}

    # The dependency is installed (offline, from host-downloaded wheels) and importable.
    out = docker_client.containers.run(
        changed_deps.tag, ["python3", "-c", "import sys; sys.path.insert(0, '/opt/jazzmine/site');"
                           " import six; print(six.__name__)"],
        remove=True, network_mode="none",
    )  # fmt: skip
    assert out.strip() == b"six"


@pytest.mark.docker
def test_the_image_runs_as_nobody_without_pip_apt_or_compilers(docker_client, image):
    script = (
        "import os, shutil, importlib.util as u; "
        "print(os.getuid(), u.find_spec('pip') is None, "
        "[t for t in ('apt-get', 'pip', 'pip3', 'gcc', 'cc', 'curl', 'wget') if shutil.which(t)])"
    )
    out = docker_client.containers.run(image, ["python3", "-c", script], remove=True,
                                       network_mode="none")  # fmt: skip
    assert out.decode().split(" ", 2) == ["65534", "True", "[]\n"]


@pytest.mark.docker
def test_a_missing_package_says_which_step_and_package_failed(
    docker_client, cache_dir, sandbox_name
):
    registry = registry_with(sandbox_name, SOURCE_V1, ["no-such-package-jazzmine-xyz==9.9"])
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=cache_dir)
    with pytest.raises(BuildError) as caught:
        builder.ensure_image(sandbox_name)
    assert caught.value.step == "download dependencies"
    assert "no-such-package-jazzmine-xyz" in (caught.value.package or "")
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(builder.image_tag(sandbox_name))


def test_compiled_wheels_are_refused_by_name(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "fastthing-1.0-cp311-cp311-linux_x86_64.whl", "w") as wheel:
        wheel.writestr("fastthing-1.0.dist-info/WHEEL", "Root-Is-Purelib: false\n")
    with pytest.raises(BuildError) as caught:
        unpack_wheels(wheels, tmp_path / "site", lambda _line: None)
    assert (caught.value.step, caught.value.package) == ("install dependencies", "fastthing")
    assert "compiled code" in str(caught.value)
