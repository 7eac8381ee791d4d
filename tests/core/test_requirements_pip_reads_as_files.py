"""A requirement pip would read as a file path is refused, and only a list of requirements is
taken: anything else used to read wrong without an error.

`foo==1.0+a.zip` is valid PEP 508 (a local version label `a.zip`), but pip cuts the marker off
at ';' and takes text ending like an archive for a file in its working directory. A dict given
as dependencies was read as its keys, its versions silently dropped.
"""

from __future__ import annotations

import pytest

from jazzmine.requirements import RequirementError, requirement_check, requirements_check

ARCHIVE_ENDINGS = [
    "foo==1.0+a.zip",
    "foo!=1.0+a.tar.gz",
    "foo==1+a.whl",
    "foo[x]==1.0+a.tar",
    "foo==1.0+a.tgz",
    "foo==1.0+a.tar.bz2",
    "foo==1.0+a.tar.xz",
    "foo==1.0+a.ZIP",
    "foo == 1.0+build.whl",
    "foo==1.0+a.zip ; python_version >= '3.8'",
    "foo==1.0+a.zip;python_version>='3.8'",
    "foo.zip[extra]",
]


@pytest.mark.parametrize("text", ARCHIVE_ENDINGS)
def test_a_requirement_ending_like_an_archive_is_refused(text: str) -> None:
    with pytest.raises(RequirementError, match="ends like an archive file name"):
        requirement_check(text)


@pytest.mark.parametrize(
    "text",
    [
        "foo==1.0+zip",
        "foo==1.0+a.zipx",
        "zipp==3.17",
        "foo==1.0; platform_machine == 'x.zip'",
        "wheel>=0.40",
        "foo==1.0+ubuntu.1",
    ],
)
def test_a_requirement_that_only_mentions_an_archive_still_passes(text: str) -> None:
    assert requirement_check(text) == text


@pytest.mark.parametrize(
    "items, kind",
    [
        ({"requests": "==2.0"}, "a dict value"),
        ({"requests", "rich"}, "a set value"),
        (frozenset({"rich"}), "a frozenset value"),
        ((r for r in ["rich"]), "a generator value"),
        ("requests==2.0", "one string"),
        (b"requests", "one string"),
        (iter(["rich"]), "a list_iterator value"),
        (None, "a NoneType value"),
        (3, "a int value"),
    ],
    ids=["dict", "set", "frozenset", "generator", "str", "bytes", "iterator", "None", "int"],
)
def test_requirements_must_come_as_a_list(items: object, kind: str) -> None:
    with pytest.raises(RequirementError, match=f"give a list of requirement strings, not {kind}"):
        requirements_check(items)


def test_a_list_or_tuple_is_checked_as_before() -> None:
    assert requirements_check(["rich", " numpy>=1 "]) == ["rich", "numpy>=1"]
    assert requirements_check(("rich",)) == ["rich"]
