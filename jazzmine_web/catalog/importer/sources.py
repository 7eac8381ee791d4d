"""The files an import reads: from an upload or from disk, each read only when small enough."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from .problems import ImportProblem


@dataclass(frozen=True)
class SourceFile:
    """A file to import: its name, its size, and its bytes (None when too big to read)."""

    name: str
    size: int
    data: bytes | None


def max_file_bytes() -> int:
    """Return the largest source file the importer reads."""
    return int(getattr(settings, "JAZZMINE_IMPORT_MAX_FILE_BYTES", 1024 * 1024))


def source_file_from_upload(upload: Any) -> SourceFile:
    """Wrap an uploaded file, reading it only when it is small enough."""
    size = int(upload.size or 0)
    data = upload.read() if size <= max_file_bytes() else None
    return SourceFile(name=Path(upload.name or "upload.py").name, size=size, data=data)


def source_file_from_path(path: Path) -> SourceFile:
    """Wrap a file on disk, reading it only when it is small enough."""
    size = path.stat().st_size
    return SourceFile(
        name=str(path), size=size, data=path.read_bytes() if size <= max_file_bytes() else None
    )


def decode_source(
    item: SourceFile, *, limit: int | None = None
) -> tuple[str | None, ImportProblem | None]:
    """Return the file's text, or the problem that stops it from being read.

    `limit` is `max_file_bytes()` unless given (the checker process reads no settings).
    """
    limit = max_file_bytes() if limit is None else limit
    if item.data is None or item.size > limit or len(item.data) > limit:
        return None, ImportProblem(
            item.name, None, f"file is {item.size:,} bytes; the limit is {limit:,} bytes"
        )
    if not item.name.endswith(".py"):
        return None, ImportProblem(item.name, None, "only .py files can be imported")
    if b"\x00" in item.data:
        return None, ImportProblem(item.name, None, "binary file (contains NUL bytes), not Python")
    try:
        text = item.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = item.data[: exc.start].count(b"\n") + 1
        return None, ImportProblem(item.name, line, f"not UTF-8 text ({exc.reason})")
    # Python reads source with universal newlines; the core's checksums assume "\n".
    return text.replace("\r\n", "\n").replace("\r", "\n"), None
