"""SandboxBuilder against the real engine: tags, reuse, rebuild on change, hardening."""

from __future__ import annotations

import sys
import uuid
import zipfile

import docker
import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.interrupts import Interrupt
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox.commands import TETHER
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


ATTACKER_REQUIREMENTS = [
    " -r /etc/passwd",
    "--log=/tmp/jazzmine-pwned",
    "-rrequirements.txt",
    "numpy --index-url http://evil.example/simple",
    "numpy;--log x",
    "numpy\t-r /etc/passwd",
    "numpy\n-r /etc/passwd",
    "\u2010r /etc/passwd",
    "pkg @ file:///etc",
    "../evil",
    "x==1 -i http://y",
    "git+https://example.com/x.git",
    "evil.whl",
    "-e .",
    "--find-links=/tmp",
]


class _NoEngine:
    """A Docker client that fails the test on any use: refusals come before the engine."""

    def __getattr__(self, name: str):
        raise AssertionError(f"the builder touched the engine ({name}) before refusing")


def _forbid_pip(monkeypatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def popen(command, *args, **kwargs):
        calls.append(list(command))
        raise AssertionError(f"pip ran: {command}")

    monkeypatch.setattr("jazzmine.sandbox.commands.subprocess.Popen", popen)
    return calls


@pytest.mark.parametrize("bad", ATTACKER_REQUIREMENTS)
def test_the_builder_refuses_a_dependency_that_is_not_a_requirement_without_running_pip(
    bad, tmp_path, monkeypatch
):
    calls = _forbid_pip(monkeypatch)
    registry = ToolRegistry()
    # The core registry is not the wall: the builder must be one on its own.
    registry.register_sandbox(SandboxConfig(name="victim", dependencies=["httpx", bad]))
    builder = SandboxBuilder(registry, client=_NoEngine(), cache_dir=tmp_path)
    with pytest.raises(BuildError, match="not a plain requirement"):
        builder.stage("victim", tmp_path / "runtime")
    assert calls == []
    assert not (tmp_path / "jazzmine-pwned").exists()


def test_pip_gets_the_requirements_after_a_double_dash_and_the_operators_indexes(
    tmp_path, monkeypatch
):
    from jazzmine.sandbox.wheels import PipIndexes, download_wheels

    seen: dict[str, object] = {}

    def popen(command, *args, **kwargs):
        seen["command"], seen["cwd"] = list(command), kwargs.get("cwd")
        raise RuntimeError("stop before pip runs")

    monkeypatch.setattr("jazzmine.sandbox.commands.subprocess.Popen", popen)
    indexes = PipIndexes(index_url="https://pypi.internal/simple")
    with pytest.raises(RuntimeError):
        download_wheels(["numpy>=1,<2"], tmp_path, print, indexes=indexes)
    tethered = seen["command"]
    # pip runs under its tether (it dies with its worker): what pip gets follows the "--".
    assert tethered[3:6] == [str(TETHER), tethered[4], "--"], tethered
    # Under a file size limit (a wheel's unpacked limit): pip itself has none.
    limit, command = tethered[6:9], tethered[9:]
    assert limit[0].endswith("/prlimit") and limit[1:] == [f"--fsize={512 * 1024 * 1024}", "--"]
    assert command[:3] == [sys.executable, "-m", "pip"]
    assert command[-2:] == ["--", "numpy>=1,<2"]
    assert command[command.index("--index-url") + 1] == "https://pypi.internal/simple"
    assert command.index("--index-url") < command.index("--")
    assert seen["cwd"] is not None  # an empty directory: no file there reads as a requirement


@pytest.mark.parametrize(
    "image", ["jazzmine/sandbox-other-team:0123456789abcdef-12345678", "registry.evil.io/x:1"]
)
def test_the_builder_refuses_a_base_image_the_operator_did_not_list(image, tmp_path):
    from jazzmine.sandbox.builder import BuildPolicy

    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="victim", base_image=image))
    builder = SandboxBuilder(registry, client=_NoEngine(), cache_dir=tmp_path, policy=BuildPolicy())
    with pytest.raises(BuildError, match="not on the operator's list"):
        builder.ensure_image("victim")
    with pytest.raises(BuildError, match="not on the operator's list"):
        builder.wheel_target(image)


def test_the_base_image_script_pulls_only_when_the_operator_allows(tmp_path, monkeypatch):
    from jazzmine.sandbox.builder import BuildPolicy

    seen: dict[str, object] = {}

    class Missing:
        class images:
            @staticmethod
            def get(tag):
                raise docker.errors.ImageNotFound(tag)

    def popen(command, *args, **kwargs):
        seen["env"] = kwargs.get("env") or {}
        raise RuntimeError("stop before the script runs")

    monkeypatch.setattr("jazzmine.sandbox.commands.subprocess.Popen", popen)
    registry = ToolRegistry()
    builder = SandboxBuilder(registry, client=Missing(), cache_dir=tmp_path, policy=BuildPolicy())
    with pytest.raises(RuntimeError):
        builder._ensure_base("jazzmine/base:bookworm", print, Interrupt())
    assert seen["env"]["JAZZMINE_BASE_IMAGE_PULL"] == "0"


def test_the_build_policy_reads_the_operators_environment(monkeypatch):
    from jazzmine.sandbox.builder import BuildPolicy

    monkeypatch.setenv("JAZZMINE_BASE_IMAGES", "jazzmine/base:bookworm, corp/python:3.11")
    monkeypatch.setenv("JAZZMINE_BASE_IMAGE_PULL", "true")
    monkeypatch.setenv("JAZZMINE_PIP_EXTRA_INDEX_URLS", "https://a/simple,https://b/simple")
    policy = BuildPolicy.from_env()
    assert policy.base_images == ("jazzmine/base:bookworm", "corp/python:3.11")
    assert policy.allow_pull is True
    assert policy.indexes.pip_args() == [
        "--extra-index-url", "https://a/simple", "--extra-index-url", "https://b/simple",
    ]  # fmt: skip
