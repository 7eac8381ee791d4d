"""A zip whose member name is flagged UTF-8 but holds other bytes is refused, never let through
as UnicodeDecodeError: zipfile raises it reading the name (from the central directory when it
opens the zip, from the member's own header when it unpacks one), and the import page turned
it into a 500."""

from __future__ import annotations

import pytest

from jazzmine.scripttools import ScriptToolError, load_zip

from .unreadable_zips import SCRIPT, tool_json_text, zip_of

# zipfile flags a name outside ASCII as UTF-8; these bytes are no UTF-8 at all.
NOT_UTF8 = b"\xff\xfe"


def zip_named_otherwise(count: int = -1) -> bytes:
    """Return a zip of tool `é` whose first `count` spellings of `é` (all: -1) are NOT_UTF8.

    The local header of `é/tool.json` comes first, its central directory entry later.
    """
    data = zip_of({"é/tool.json": tool_json_text(), "é/script.py": SCRIPT})
    return data.replace("é".encode(), NOT_UTF8, count)


def test_a_central_directory_name_that_is_not_utf8_is_an_unreadable_zip() -> None:
    with pytest.raises(ScriptToolError) as caught:
        load_zip(zip_named_otherwise())
    assert caught.value.file == "<zip>"
    assert caught.value.problem.startswith("not a readable zip archive")


def test_a_member_header_name_that_is_not_utf8_is_a_member_that_cannot_be_read() -> None:
    with pytest.raises(ScriptToolError) as caught:
        load_zip(zip_named_otherwise(count=1))
    assert caught.value.file == "é/tool.json"
    assert caught.value.problem.startswith("cannot be read: ")
