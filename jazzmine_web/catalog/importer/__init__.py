"""Find `@tool` functions and sandbox profiles in Python files by parsing, never executing them."""

from __future__ import annotations

from .parse import parse_files
from .problems import ImportProblem, ImportRefused
from .sources import SourceFile, source_file_from_path, source_file_from_upload

__all__ = [
    "ImportProblem",
    "ImportRefused",
    "SourceFile",
    "parse_files",
    "source_file_from_path",
    "source_file_from_upload",
]
