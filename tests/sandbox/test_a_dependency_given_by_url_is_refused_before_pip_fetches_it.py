"""A dependency a wheel declares by URL is refused, and pip never fetches that URL.

The requirements a sandbox names are plain PEP 508 names, but pip resolves their dependencies
from the wheels' own metadata, and a wheel on an operator's index may declare
`Requires-Dist: x @ http://10.0.0.5/internal.whl` or `x @ file:///etc/...`. pip refuses that
only for a package it downloaded from PyPI's own file host: from any other index it fetched
the URL from the worker host (a request to an address the package's publisher chose) or read
the host's file into the wheel set, and so into the sandbox image. Now the download fails
naming the package that declared the URL and the URL, before pip opens it, however pip's
resolver reaches that package: a direct or deeper dependency, a marker or extra, an older
version a constraint or a backtrack leads to.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import BuildError, SandboxBuilder
from jazzmine.sandbox.wheels import PipIndexes, download_wheels

from .served_index import (
    Project,
    Recorder,
    opens_of,
    recording_server,
    served_index,
    wheel_bytes,
    write_wheel,
)

DEP = Project("jzdep", "1.0")  # what the URL serves: a real wheel, should pip ever ask


@pytest.fixture
def internal() -> Recorder:
    """The "internal" address a dependency names: it notes every connection made to it."""
    with recording_server(wheel_bytes(DEP)) as recorder:
        yield recorder


def download(tmp_path: Path, projects: list[Project], requirements: list[str]) -> Path:
    with served_index(tmp_path / "index", projects) as url:
        return download_wheels(
            requirements, tmp_path / "cache", print, indexes=PipIndexes(index_url=url)
        )


def refusal(tmp_path: Path, projects: list[Project], requirements: list[str]) -> BuildError:
    """Return the BuildError of downloading `requirements`; check that nothing was kept."""
    with pytest.raises(BuildError) as caught:
        download(tmp_path, projects, requirements)
    assert caught.value.step == "download dependencies"
    wheels = tmp_path / "cache" / "wheels"
    assert not wheels.exists() or list(wheels.iterdir()) == [], list(wheels.iterdir())
    return caught.value


def assert_names(error: BuildError, package: str, url: str) -> None:
    text = str(error)
    assert error.package == package, text
    assert url in text and "jzdep" in text, text
    assert "URL" in text, text


def test_a_dependency_given_by_an_http_url_is_refused_and_never_requested(tmp_path, internal):
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [Project("jzurl", "1.0", requires=(f"jzdep @ {url}",))]
    error = refusal(tmp_path, projects, ["jzurl"])
    assert_names(error, "jzurl", url)
    assert internal.seen == []


def test_a_dependency_given_by_a_file_url_is_refused_and_the_file_never_read(tmp_path):
    host_file = write_wheel(tmp_path / "host", DEP)  # a file of the worker host
    url = host_file.as_uri()
    projects = [Project("jzurl", "1.0", requires=(f"jzdep @ {url}",))]
    with opens_of(host_file) as opened:
        error = refusal(tmp_path, projects, ["jzurl"])
    assert_names(error, "jzurl", url)
    assert opened == [0], "pip opened the host's file"


def test_a_url_dependency_under_a_marker_that_applies_is_refused(tmp_path, internal):
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [Project("jzurl", "1.0", requires=(f'jzdep @ {url} ; python_version >= "3"',))]
    error = refusal(tmp_path, projects, ["jzurl"])
    assert_names(error, "jzurl", url)
    assert internal.seen == []


def test_a_url_dependency_of_an_extra_the_requirement_asks_for_is_refused(tmp_path, internal):
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    requires = (f'jzdep @ {url} ; extra == "internal"',)
    projects = [Project("jzurl", "1.0", requires=requires, extras=("internal",))]
    error = refusal(tmp_path, projects, ["jzurl[internal]"])
    assert_names(error, "jzurl", url)
    assert internal.seen == []


def test_a_url_dependency_under_a_marker_that_does_not_apply_is_never_fetched(tmp_path, internal):
    # pip drops a dependency whose marker does not apply before it makes a requirement of
    # it: such a URL is never a request, and the package downloads without it.
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [Project("jzurl", "1.0", requires=(f'jzdep @ {url} ; sys_platform == "win32"',))]
    wheels = download(tmp_path, projects, ["jzurl"])
    assert sorted(p.name for p in wheels.glob("*.whl")) == ["jzurl-1.0-py3-none-any.whl"]
    assert internal.seen == []


def test_a_url_dependency_two_levels_down_names_the_package_that_declared_it(tmp_path, internal):
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [
        Project("jztop", "1.0", requires=("jzmid>=1",)),
        Project("jzmid", "1.0", requires=(f"jzdep @ {url}",)),
    ]
    error = refusal(tmp_path, projects, ["jztop"])
    assert_names(error, "jzmid", url)
    assert internal.seen == []


def test_an_older_version_a_constraint_leads_to_is_refused(tmp_path, internal):
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [
        Project("jzold", "2.0"),  # the newest is clean
        Project("jzold", "1.0", requires=(f"jzdep @ {url}",)),
    ]
    error = refusal(tmp_path, projects, ["jzold<2"])
    assert_names(error, "jzold", url)
    assert internal.seen == []


def test_a_version_the_resolver_backtracks_to_is_refused(tmp_path, internal):
    # jzback 2.0 needs a jzbase the requirements rule out: pip backtracks to jzback 1.0,
    # whose metadata names the URL.
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [
        Project("jzback", "2.0", requires=("jzbase>=2",)),
        Project("jzback", "1.0", requires=("jzbase>=1", f"jzdep @ {url}")),
        Project("jzbase", "2.0"),
        Project("jzbase", "1.0"),
    ]
    error = refusal(tmp_path, projects, ["jzback", "jzbase<2"])
    assert_names(error, "jzback", url)
    assert internal.seen == []


def test_the_legacy_resolver_a_hosts_pip_configuration_may_pick_refuses_too(
    tmp_path, internal, monkeypatch
):
    monkeypatch.setenv("PIP_USE_DEPRECATED", "legacy-resolver")
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [
        Project("jztop", "1.0", requires=("jzmid>=1",)),
        Project("jzmid", "1.0", requires=(f"jzdep @ {url}",)),
    ]
    # (pip 23.2's `download` with the legacy resolver then trips on an assertion of its own
    # at the end: it had fetched the URL by then.)
    error = refusal(tmp_path, projects, ["jztop"])
    assert internal.seen == []
    assert_names(error, "jzmid", url)


def test_a_clean_set_still_downloads_and_installs(tmp_path, internal, monkeypatch):
    # An old version that names a URL is no obstacle while nothing resolves to it.
    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [
        Project("jzclean", "1.1", requires=("jzhelper>=1", 'jzextra ; python_version < "3"')),
        Project("jzclean", "1.0", requires=(f"jzdep @ {url}",)),
        Project("jzhelper", "1.0"),
    ]
    with served_index(tmp_path / "index", projects) as index_url:
        monkeypatch.setenv("JAZZMINE_PIP_INDEX_URL", index_url)
        registry = ToolRegistry()
        registry.register_sandbox(SandboxConfig(name="clean", dependencies=["jzclean"]))
        builder = SandboxBuilder(registry, cache_dir=tmp_path / "cache")
        lines = builder.stage("clean", tmp_path / "runtime")
    assert [line.split()[0] for line in lines] == [
        "jzclean-1.1-py3-none-any.whl",
        "jzhelper-1.0-py3-none-any.whl",
    ]
    site = tmp_path / "runtime" / "site"
    assert (site / "jzclean" / "__init__.py").read_text() == "VERSION = '1.1'\n"
    assert (site / "jzhelper" / "__init__.py").exists()
    assert internal.seen == []


def test_pip_refuses_to_run_when_the_guard_did_not_load(tmp_path, internal):
    # Fail closed: the download's pip is given an option only the guard understands (and
    # takes away). A pip that started without the guard stops at that option, before it
    # reads an index, so nothing is ever fetched unguarded.
    from jazzmine.sandbox.pip_guard import GUARD_OPTION

    url = internal.url("jzdep-1.0-py3-none-any.whl")
    projects = [Project("jzurl", "1.0", requires=(f"jzdep @ {url}",))]
    with served_index(tmp_path / "index", projects) as index_url:
        staging = tmp_path / "staging"
        staging.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", GUARD_OPTION, "--only-binary=:all:",
             "--dest", str(staging), "--index-url", index_url, "--", "jzurl"],
            cwd=staging, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode != 0
    assert GUARD_OPTION in done.stderr + done.stdout
    assert list(staging.iterdir()) == []
    assert internal.seen == []


def test_the_hosts_own_sitecustomize_still_runs_in_the_guarded_pip(tmp_path):
    # The guard reaches pip as a sitecustomize: the one it hides (a distribution's own, or
    # the operator's) runs too, as it did before.
    from jazzmine.sandbox.pip_guard import GUARD_OPTION, guarded_env

    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("print('the host sitecustomize ran')\n")
    env = guarded_env({**os.environ, "PYTHONPATH": str(own)})
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", GUARD_OPTION, "--help"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("the host sitecustomize ran\n"), done.stdout[:200]
    assert "no such option" not in done.stderr
