"""Dependencies are PEP 508 requirements and nothing else: no pip options, URLs or paths.

Every entry path (sandbox and tool forms, `.py` import, `tool.json`, the builder itself) calls
`requirements_check`, because a dependency string ends up on pip's command line on the host:
`-r /etc/passwd` would print a host file into the build log and `--log=PATH` would write one.
"""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement

MAX_REQUIREMENT_CHARS = 200
MAX_REQUIREMENTS = 200
# Everything a plain requirement needs (name, extras, specifiers, a quoted marker) and nothing
# else: no '/', ':', '@' or '\' (URLs, paths), no '#' or '$' (requirements-file syntax), no
# tab, newline or unicode look-alike of '-'.
_ALLOWED = re.compile(r"[A-Za-z0-9 ._\-\[\],<>=!~*;()'\"+]+")
_DASH_OPENS_A_WORD = re.compile(r"(?:^|[^A-Za-z0-9._\-\]])-")
# pip takes a "name" ending like an archive for a file in its working directory.
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar", ".tgz", ".tbz", ".txz", ".tlz", ".gz", ".bz2",
                     ".xz", ".lz", ".lzma", ".tar.gz", ".tar.bz2", ".tar.xz")  # fmt: skip


class RequirementError(ValueError):
    """A dependency that is not a plain requirement; says which one and why."""

    def __init__(self, text: str, problem: str, *, line: int | None = None) -> None:
        self.text = text
        self.problem = problem
        self.line = line
        where = f"line {line}: " if line is not None else ""
        shown = text if len(text) <= 80 else text[:77] + "..."
        super().__init__(f"{where}{shown!r} is not a plain requirement: {problem}")


def requirement_check(text: object) -> str:
    """Return the requirement stripped of outer spaces; raise RequirementError if not plain."""
    if not isinstance(text, str):
        raise RequirementError(repr(text), "a requirement is a string")
    value = text.strip(" ")
    if not value:
        raise RequirementError(text, "it is empty")
    if len(value) > MAX_REQUIREMENT_CHARS:
        raise RequirementError(text, f"longer than {MAX_REQUIREMENT_CHARS} characters")
    if value.startswith("-"):
        raise RequirementError(text, "pip options are not allowed; indexes are set by the operator")
    if not _ALLOWED.fullmatch(value):
        bad = next(ch for ch in value if not _ALLOWED.fullmatch(ch))
        raise RequirementError(
            text,
            f"character {bad!r} is not allowed (no options, URLs, paths, tabs or line breaks)",
        )
    try:
        requirement = Requirement(value)
    except InvalidRequirement as exc:
        first = str(exc).splitlines()[0] if str(exc) else "cannot be parsed"
        raise RequirementError(text, f"not PEP 508 ({first})") from None
    if requirement.url:
        raise RequirementError(text, "URLs are not allowed")
    # pip cuts the marker off at ';' and takes what is left for a file path when it ends like
    # an archive: the name (`foo.zip[x]`) or the whole text (`foo==1.0+a.zip`, a valid local
    # version label). One rule for both: no archive ending before the marker.
    head = value.partition(";")[0].strip().lower()
    if requirement.name.lower().endswith(_ARCHIVE_SUFFIXES) or head.endswith(_ARCHIVE_SUFFIXES):
        raise RequirementError(
            text,
            "it ends like an archive file name (.zip, .whl, .tar.gz...), which pip reads as a "
            "file path; name and version must not end that way",
        )
    if any(spec.operator == "===" for spec in requirement.specifier):
        raise RequirementError(text, "arbitrary equality (===) is not allowed; use ==")
    if _DASH_OPENS_A_WORD.search(value):
        # A quoted marker value may hold "--log": harmless after `--`, but never plain.
        raise RequirementError(text, "a word starting with '-' reads as a pip option")
    return value


def requirements_check(items: object) -> list[str]:
    """Return the checked requirements; raise RequirementError naming the first bad line."""
    # A list or tuple only: any other iterable reads wrong without an error (a string as its
    # letters, a mapping {"requests": "==2.0"} as its keys, dropping the versions).
    if not isinstance(items, (list, tuple)):
        shown = (
            "one string" if isinstance(items, (str, bytes)) else f"a {type(items).__name__} value"
        )
        raise RequirementError(repr(items)[:80], f"give a list of requirement strings, not {shown}")
    checked: list[str] = []
    for line, item in enumerate(items, start=1):
        if line > MAX_REQUIREMENTS:
            raise RequirementError("…", f"more than {MAX_REQUIREMENTS} requirements", line=line)
        try:
            checked.append(requirement_check(item))
        except RequirementError as exc:
            raise RequirementError(exc.text, exc.problem, line=line) from None
    return checked
