"""Script-tool zips that Python's zipfile or json cannot read, each one way (shared by the
library and the web import tests)."""

from __future__ import annotations

import io
import json
import struct
import zipfile

DESCRIPTION = "Answer x questions for tests. Use when a test needs the x script."
SCRIPT = "print(1)\n" * 50


def tool_json_text(extra: str = "") -> str:
    """Return a good tool.json for tool `x`, with raw JSON text spliced in before its end."""
    text = json.dumps({"name": "x", "description": DESCRIPTION, "parameters": {"type": "object"}})
    return text[:-1] + extra + "}" if extra else text


def zip_of(files: dict[str, str], compression: int = zipfile.ZIP_STORED) -> bytes:
    """Return a zip holding the given files by path."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def good_zip(compression: int = zipfile.ZIP_STORED) -> bytes:
    return zip_of({"x/tool.json": tool_json_text(), "x/script.py": SCRIPT}, compression)


def _headers_patched(data: bytes, local_offset: int, central_offset: int, value: int) -> bytes:
    """Set a 2-byte field in every local and central header (flags, compression method)."""
    raw = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        start = 0
        while (start := raw.find(signature, start)) >= 0:
            struct.pack_into("<H", raw, start + offset, value)
            start += 4
    return bytes(raw)


def _script_data_replaced(compression: int, fill: bytes, keep: int = 0) -> bytes:
    """Overwrite the script's compressed bytes (after the first `keep`) with `fill` repeated."""
    raw = bytearray(good_zip(compression))
    at = raw.find(b"PK\x03\x04", raw.find(b"x/script.py") - 30)
    size = struct.unpack_from("<I", raw, at + 18)[0]
    name_len, extra_len = struct.unpack_from("<HH", raw, at + 26)
    start = at + 30 + name_len + extra_len + keep
    raw[start : start + size - keep] = (fill * size)[: size - keep]
    return bytes(raw)


def _bad_crc(member_text: str) -> bytes:
    raw = bytearray(good_zip())
    raw[raw.find(member_text.encode())] ^= 0x20
    return bytes(raw)


# name -> (zip bytes, the member named in the error, words the error holds)
UNREADABLE_MEMBERS = {
    "bad CRC in the script": (_bad_crc("print(1)"), "x/script.py", "damaged"),
    "bad CRC in tool.json": (_bad_crc('"description"'), "x/tool.json", "damaged"),
    "encrypted flag": (_headers_patched(good_zip(), 6, 8, 1), "x/tool.json", "encrypted"),
    "unknown compression method": (
        _headers_patched(good_zip(), 8, 10, 99),
        "x/tool.json",
        "method",
    ),
    "deflate data that zlib refuses": (
        _script_data_replaced(zipfile.ZIP_DEFLATED, b"\xff"),
        "x/script.py",
        "cannot be read",
    ),
    "bzip2 data that bz2 refuses": (
        _script_data_replaced(zipfile.ZIP_BZIP2, b"\xff"),
        "x/script.py",
        "cannot be read",
    ),
    "lzma data that lzma refuses": (
        _script_data_replaced(zipfile.ZIP_LZMA, b"\x00", keep=2),
        "x/script.py",
        "cannot be read",
    ),
}

BIG = "1" + "0" * 5000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
# name -> (zip bytes, words the error holds): tool.json that json or float() cannot take.
UNREADABLE_TOOL_JSON = {
    "timeout 10**400": (
        zip_of(
            {"x/tool.json": tool_json_text(', "timeout": 1' + "0" * 400), "x/script.py": SCRIPT}
        ),
        "timeout",
    ),
    "timeout -10**400": (
        zip_of(
            {"x/tool.json": tool_json_text(', "timeout": -1' + "0" * 400), "x/script.py": SCRIPT}
        ),
        "timeout",
    ),
    "5000-digit number": (
        zip_of({"x/tool.json": tool_json_text(', "zz": ' + BIG), "x/script.py": SCRIPT}),
        "digits",
    ),
    "5000-digit timeout": (
        zip_of({"x/tool.json": tool_json_text(', "timeout": ' + BIG), "x/script.py": SCRIPT}),
        "digits",
    ),
    "arrays 3000 deep": (
        zip_of(
            {
                "x/tool.json": tool_json_text(', "zz": ' + "[" * 3000 + "]" * 3000),
                "x/script.py": SCRIPT,
            }
        ),
        "nested too deeply",
    ),
    "objects 3000 deep in the parameters": (
        zip_of(
            {
                "x/tool.json": tool_json_text().replace(
                    '{"type": "object"}', '{"type": "object", "p": ' + DEEP_OBJECT + "}"
                ),
                "x/script.py": SCRIPT,
            }
        ),
        "nested too deeply",
    ),
}
