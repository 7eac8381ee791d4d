"""Wheels downloaded from one package index are never reused for a build that reads another.

The same requirement names another package on another index: `jzreport==1.0` on a company's
own index is not the `jzreport==1.0` a public index serves. The wheel cache was keyed by the
requirements and the target alone, so once an operator moved the deployment to another index
(away from one that served a bad package, say), or two deployments on one host with their own
indexes shared the default cache directory, builds kept unpacking the first index's wheels
into images whose dependencies an admin accepted for the second.
"""

from __future__ import annotations

import zipfile

from jazzmine.sandbox.wheels import PipIndexes, download_wheels
from tests.hostile_wheels import write_index


def index_serving(root, content: bytes) -> PipIndexes:
    """An index serving `jzreport==1.0`, whose module holds `content`."""
    url = write_index(root, {"jzreport": {"1.0": {"jzreport/__init__.py": content}}})
    return PipIndexes(index_url=url)


def module_of(wheel_dir) -> bytes:
    (wheel,) = wheel_dir.glob("jzreport-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.read("jzreport/__init__.py")


def test_another_index_gets_its_own_download_of_the_same_requirement(tmp_path) -> None:
    cache = tmp_path / "cache"
    theirs = index_serving(tmp_path / "theirs", b"WHO = 'the first index'\n")
    ours = index_serving(tmp_path / "ours", b"WHO = 'the operator's index now'\n")

    first = download_wheels(["jzreport==1.0"], cache, print, indexes=theirs)
    assert module_of(first) == b"WHO = 'the first index'\n"
    now = download_wheels(["jzreport==1.0"], cache, print, indexes=ours)
    assert now != first
    assert module_of(now) == b"WHO = 'the operator's index now'\n"


def test_the_same_index_still_reuses_its_download(tmp_path) -> None:
    cache = tmp_path / "cache"
    index = index_serving(tmp_path / "index", b"WHO = 'one index'\n")
    first = download_wheels(["jzreport==1.0"], cache, print, indexes=index)
    logs: list[str] = []
    assert download_wheels(["jzreport==1.0"], cache, logs.append, indexes=index) == first
    assert logs == ["wheels: reusing cached wheels for jzreport==1.0"]
