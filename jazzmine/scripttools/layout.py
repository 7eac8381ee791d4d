"""Read and write the on-disk layout `<tool_name>/{tool.json, script.py|script.js}`.

Folders and zips come from users, so every path is checked: no absolute paths, no `..`, no
symlinks, bounded sizes and member counts, and each error names the file and the problem.
"""

from __future__ import annotations

import io
import lzma
import stat
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from .model import SCRIPT_FILES, ScriptTool, ScriptToolError, parse_tool_json

MAX_TOOL_JSON_BYTES = 256 * 1024
MAX_SCRIPT_BYTES = 1024 * 1024
MAX_ZIP_MEMBERS = 256
MAX_ZIP_TOTAL_BYTES = 16 * 1024 * 1024
# Files that archivers and desktops add on their own; skipped rather than refused.
_NOISE = {".DS_Store", "Thumbs.db"}


def tool_from_files(files: dict[str, bytes], *, where: str = "") -> ScriptTool:
    """Build one script tool from its files by name (`tool.json` and one script)."""
    prefix = f"{where}/" if where else ""
    unexpected = sorted(n for n in files if n != "tool.json" and n not in SCRIPT_FILES)
    if unexpected:
        raise ScriptToolError(
            prefix + unexpected[0],
            "unexpected file: a script tool is tool.json plus one script.py or script.js",
        )
    if "tool.json" not in files:
        raise ScriptToolError(prefix + "tool.json", "missing file")
    scripts = [n for n in SCRIPT_FILES if n in files]
    if not scripts:
        raise ScriptToolError(prefix + "script.py", "missing file (or script.js for node)")
    if len(scripts) > 1:
        raise ScriptToolError(prefix + scripts[1], "a tool has one script; found both")
    script_name = scripts[0]
    tool_json = _text(files["tool.json"], prefix + "tool.json", MAX_TOOL_JSON_BYTES)
    source = _text(files[script_name], prefix + script_name, MAX_SCRIPT_BYTES)
    data = parse_tool_json(tool_json, prefix + "tool.json")
    tool = ScriptTool.from_json_dict(
        data, source=source, runtime=SCRIPT_FILES[script_name], file=prefix + "tool.json"
    )
    if where and PurePosixPath(where).name != tool.name:
        raise ScriptToolError(
            prefix + "tool.json",
            f"name {tool.name!r} does not match its folder {PurePosixPath(where).name!r}",
        )
    return tool


def files_size_check(tool: ScriptTool) -> None:
    """Refuse a tool whose files, as `files()` writes them out, a zip or folder may not hold.

    Savers call this: the form has only the request's bound, and a compact tool.json a zip
    held is exported two-space indented, several times its size. Either was stored, and then
    exported into a zip this module refused to load again.
    """
    for name, text in tool.files().items():
        limit = MAX_TOOL_JSON_BYTES if name == "tool.json" else MAX_SCRIPT_BYTES
        size = len(text.encode("utf-8"))
        if size > limit:
            written = " as written out (two-space indent)" if name == "tool.json" else ""
            raise ScriptToolError(
                name, f"too large{written}: {size:,} bytes (limit {limit:,} bytes)"
            )


def _text(data: bytes, file: str, limit: int) -> str:
    if len(data) > limit:
        raise ScriptToolError(file, f"too large: {len(data)} bytes (limit {limit})")
    try:
        # A byte-order mark is dropped, as the catalog's `.py` import does: Windows editors
        # write one, json refuses it and bash reads it as part of the script's first word.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScriptToolError(file, f"not UTF-8 text (byte {exc.start})") from None


# Folders


def _read_regular(path: Path, display: str, limit: int) -> bytes:
    """Read a regular file (never through a symlink) of at most `limit` bytes."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise ScriptToolError(display, "is a symbolic link; copy the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise ScriptToolError(display, "is not a regular file")
    if info.st_size > limit:
        raise ScriptToolError(display, f"too large: {info.st_size} bytes (limit {limit})")
    return path.read_bytes()


def load_tool_dir(path: str | Path) -> ScriptTool:
    """Load one tool from its folder `<tool_name>/` (the folder name must match the name)."""
    folder = Path(path)
    if folder.is_symlink() or not folder.is_dir():
        raise ScriptToolError(str(folder), "is not a folder")
    files: dict[str, bytes] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name in _NOISE:
            continue
        display = f"{folder.name}/{entry.name}"
        limit = MAX_TOOL_JSON_BYTES if entry.name == "tool.json" else MAX_SCRIPT_BYTES
        if entry.is_dir() and not entry.is_symlink():
            raise ScriptToolError(display, "unexpected folder inside a tool folder")
        files[entry.name] = _read_regular(entry, display, limit)
    return tool_from_files(files, where=folder.name)


def load_tools_dir(path: str | Path) -> list[ScriptTool]:
    """Load every tool of a catalog folder (one subfolder per tool), or a single tool folder."""
    root = Path(path)
    if (root / "tool.json").exists() or (root / "tool.json").is_symlink():
        return [load_tool_dir(root)]
    if root.is_symlink() or not root.is_dir():
        raise ScriptToolError(str(root), "is not a folder")
    tools = [
        load_tool_dir(child)
        for child in sorted(root.iterdir())
        if child.name not in _NOISE and not child.name.startswith(".")
    ]
    if not tools:  # as for a zip: an import of nothing is a mistake in the path, not a success
        raise ScriptToolError(
            str(root), "holds no tool (expected <tool_name>/tool.json, or a tool.json here)"
        )
    return _unique(tools, str(root))


def save_tool_dir(tool: ScriptTool, parent: str | Path) -> Path:
    """Write `<parent>/<tool_name>/{tool.json, script}` and return the tool folder."""
    folder = Path(parent) / tool.name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in SCRIPT_FILES:
        if stale != tool.script_filename and (folder / stale).exists():
            (folder / stale).unlink()
    for name, text in tool.files().items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# Zips


def load_zip(data: bytes | str | Path) -> list[ScriptTool]:
    """Load the tools of a zip: `<tool_name>/tool.json` entries, or one tool at the zip's root."""
    raw = data if isinstance(data, bytes) else Path(data).read_bytes()
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise ScriptToolError("<zip>", "not a zip archive") from None
    except (zipfile.LargeZipFile, ValueError, EOFError, OSError):
        # What else a wheel's zip is refused for (`sandbox.wheel_limits.wheel_open`): a
        # central directory naming a member with bytes flagged UTF-8 that are not is a
        # UnicodeDecodeError (a ValueError), a truncated one an EOFError or OSError.
        raise ScriptToolError("<zip>", "not a readable zip archive") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise ScriptToolError(
                "<zip>", f"too many entries: {len(members)} (limit {MAX_ZIP_MEMBERS})"
            )
        entries = [(m, parts) for m in members if (parts := _safe_parts(m)) is not None]
        groups: dict[str, dict[str, bytes]] = {}
        total = 0
        for member, parts in _without_one_top_folder(entries):
            if len(parts) > 2:
                raise ScriptToolError(
                    member.filename,
                    "nested too deep: expected <tool_name>/<file> or <file> (zip the tool "
                    "folders themselves, or one folder that holds them)",
                )
            folder, name = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
            limit = MAX_TOOL_JSON_BYTES if name == "tool.json" else MAX_SCRIPT_BYTES
            # The declared size can lie; read at most one byte past the limit to know.
            if member.file_size > limit:
                raise ScriptToolError(
                    member.filename, f"too large: {member.file_size} bytes (limit {limit})"
                )
            content = _read_member(archive, member, limit + 1)
            if len(content) > limit:
                raise ScriptToolError(member.filename, f"too large (limit {limit} bytes)")
            total += len(content)
            if total > MAX_ZIP_TOTAL_BYTES:
                raise ScriptToolError("<zip>", f"unpacks to more than {MAX_ZIP_TOTAL_BYTES} bytes")
            files = groups.setdefault(folder, {})
            if name in files:
                raise ScriptToolError(member.filename, "appears twice in the zip")
            files[name] = content
    if "" in groups and len(groups) > 1:
        raise ScriptToolError("<zip>", "mixes files at the root with tool folders")
    if not groups:
        raise ScriptToolError("<zip>", "holds no tool (expected <tool_name>/tool.json)")
    tools = [tool_from_files(files, where=folder) for folder, files in sorted(groups.items())]
    return _unique(tools, "<zip>")


def _without_one_top_folder(
    entries: list[tuple[zipfile.ZipInfo, list[str]]],
) -> list[tuple[zipfile.ZipInfo, list[str]]]:
    """Return a zip's entries without the one folder that holds them all, when it holds tool
    folders: a folder of tools compressed as it is (macOS's Compress, Windows' Send to) is
    `tools/<tool_name>/tool.json`. A zip of one tool's folder (`<tool_name>/tool.json`) keeps
    its folder: it is the tool's."""
    tops = {parts[0] for _, parts in entries}
    deeper = any(len(parts) > 2 for _, parts in entries)
    if len(tops) != 1 or not deeper or any(len(parts) < 3 for _, parts in entries):
        return entries
    return [(member, parts[1:]) for member, parts in entries]


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, size: int) -> bytes:
    """Return at most `size` bytes of a member, refusing one zipfile cannot unpack."""
    try:
        with archive.open(member) as handle:
            return handle.read(size)
    except (zipfile.BadZipFile, ValueError):
        # ValueError: the member's own header names it with bytes flagged UTF-8 that are not
        # (UnicodeDecodeError), whatever the central directory said.
        reason = "damaged (bad checksum or header)"
    except NotImplementedError:
        reason = "compressed with a method Python's zipfile does not support"
    except RuntimeError:
        # zipfile's only RuntimeError on reading is "is encrypted, password required".
        reason = "encrypted; zips of script tools hold plain files"
    except (EOFError, zlib.error, lzma.LZMAError, OSError):
        # Truncated or corrupt compressed data: zlib, lzma and bz2 each fail their own way.
        reason = "its compressed data is damaged"
    raise ScriptToolError(member.filename, f"cannot be read: {reason}")


def _safe_parts(member: zipfile.ZipInfo) -> list[str] | None:
    """Return the path parts of a zip member, None to skip it, or refuse an unsafe one."""
    name = member.filename
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise ScriptToolError(name, "is a symbolic link; zips of script tools hold plain files")
    if "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ScriptToolError(name, "unsafe path: absolute or with backslashes")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ScriptToolError(name, "unsafe path: '..' leaves the archive")
    if member.is_dir() or not parts:
        return None
    if parts[0] == "__MACOSX" or parts[-1] in _NOISE:
        return None
    return parts


def export_zip(tools: Iterable[ScriptTool]) -> bytes:
    """Return a zip holding `<tool_name>/{tool.json, script}` for each tool."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for tool in _unique(list(tools), "<export>"):
            for name, text in tool.files().items():
                info = zipfile.ZipInfo(f"{tool.name}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


def _unique(tools: list[ScriptTool], where: str) -> list[ScriptTool]:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise ScriptToolError(where, f"two tools are named {tool.name!r}")
        seen.add(tool.name)
    return tools
