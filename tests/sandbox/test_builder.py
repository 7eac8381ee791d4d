"""SandboxBuilder against the real engine: tags, reuse, rebuild on change, hardening."""

from __future__ import annotations

import uuid
import zipfile

import docker
import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox.wheels import WheelTarget, unpack_wheels

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

    # A fourth version: only the newest three images of the sandbox are kept.
    fourth = build(SOURCE_V1.replace("hi ", "hey "), ["six"])
    assert fourth.built and any(line.startswith("removed old image") for line in logs)
    tags = {t for image in docker_client.images.list(name=f"jazzmine/sandbox-{sandbox_name}")
            for t in image.tags}  # fmt: skip
    assert tags == {changed_code.tag, changed_deps.tag, fourth.tag}

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


TARGET = WheelTarget.parse("3.11 glibc 2.36 x86_64")


def write_wheel(directory, name: str, files: dict[str, str]) -> None:
    with zipfile.ZipFile(directory / name, "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)


def test_a_wheel_built_for_another_platform_is_refused_by_name(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    write_wheel(wheels, "six-1.16.0-py2.py3-none-any.whl", {"six.py": "x = 1\n"})
    write_wheel(wheels, "fastthing-1.0-cp311-cp311-macosx_11_0_arm64.whl", {"fast.so": ""})
    with pytest.raises(BuildError) as caught:
        unpack_wheels(wheels, tmp_path / "site", lambda _line: None, target=TARGET)
    assert (caught.value.step, caught.value.package) == ("install dependencies", "fastthing")
    assert "cp311-cp311-macosx_11_0_arm64" in str(caught.value)
    assert "CPython 3.11 on glibc 2.36 x86_64" in str(caught.value)
    assert not (tmp_path / "site" / "six.py").exists(), "nothing is half-installed"


def test_a_compiled_wheel_for_the_sandbox_interpreter_is_unpacked(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    write_wheel(
        wheels,
        "fastthing-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        {"fastthing.cpython-311-x86_64-linux-gnu.so": "", "fastthing-1.0.dist-info/WHEEL": ""},
    )
    installed = unpack_wheels(wheels, tmp_path / "site", lambda _line: None, target=TARGET)
    assert len(installed) == 1
    assert (tmp_path / "site" / "fastthing.cpython-311-x86_64-linux-gnu.so").exists()


def test_newer_glibc_or_another_python_does_not_fit_the_target():
    from packaging.utils import parse_wheel_filename

    def fits(name: str) -> bool:
        return bool(parse_wheel_filename(name)[3] & TARGET.tags)

    assert fits("a-1-cp38-abi3-manylinux_2_17_x86_64.whl")
    assert not fits("a-1-cp311-cp311-manylinux_2_38_x86_64.whl")
    assert not fits("a-1-cp312-cp312-manylinux_2_17_x86_64.whl")
    assert not fits("a-1-cp311-cp311-manylinux_2_17_aarch64.whl")


@pytest.mark.docker
def test_a_sandbox_with_a_compiled_dependency_builds_and_runs_it(
    docker_client, cache_dir, sandbox_name
):
    source = (
        "def dump(value):\n"
        "    import ujson\n"
        "    return ToolResponse(success=True, data={'json': ujson.dumps(value)})\n"
    )
    registry = registry_with(sandbox_name, source, ["ujson"])
    builder = SandboxBuilder(registry, client=docker_client, cache_dir=cache_dir)
    logs: list[str] = []
    result = builder.ensure_image(sandbox_name, on_log=logs.append)
    assert any("wheels for CPython 3.11 on glibc" in line for line in logs)
    output = docker_client.containers.run(
        result.tag,
        ["python3", "-I", "-c",
         "import sys; sys.path[:0] = ['/opt/jazzmine/site']; import ujson; "
         "print(ujson.dumps([1, 2]), ujson.__file__.endswith('.so'))"],
        remove=True, network_mode="none",
    )  # fmt: skip
    assert output.decode().split() == ["[1,2]", "True"]
