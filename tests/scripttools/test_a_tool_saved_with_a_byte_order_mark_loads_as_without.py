"""A tool.json or a script saved with a UTF-8 byte-order mark (Windows editors write one) loads
as the same file without it, as a catalog `.py` import does. Before, the tool.json was refused
("Unexpected UTF-8 BOM") and the script kept the mark: an invisible character first in the
code a reviewer reads, and, in a bash script, part of its first word."""

from __future__ import annotations

import json

import pytest

from jazzmine.scripttools import load_tool_dir, load_zip

from .samples import rsi_json, rsi_script
from .test_layout import make_zip

BOM = b"\xef\xbb\xbf"


def files(*, json_bom: bool, script_bom: bool) -> dict[str, bytes]:
    return {
        "calculate_rsi/tool.json": (BOM if json_bom else b"") + json.dumps(rsi_json()).encode(),
        "calculate_rsi/script.py": (BOM if script_bom else b"") + rsi_script().encode(),
    }


@pytest.mark.parametrize(("json_bom", "script_bom"), [(True, False), (False, True), (True, True)])
def test_a_zip_with_a_byte_order_mark_loads_as_one_without(json_bom, script_bom) -> None:
    plain = load_zip(make_zip(files(json_bom=False, script_bom=False)))
    marked = load_zip(make_zip(files(json_bom=json_bom, script_bom=script_bom)))
    assert marked == plain
    assert not marked[0].source.startswith("\ufeff")


def test_a_folder_with_a_byte_order_mark_loads_as_one_without(tmp_path) -> None:
    for name, data in files(json_bom=True, script_bom=True).items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    tool = load_tool_dir(tmp_path / "calculate_rsi")
    assert tool.source == rsi_script()
    assert tool.name == "calculate_rsi"


def test_a_mark_anywhere_but_first_stays_in_the_text(tmp_path) -> None:
    # Only a leading mark is an encoding's signature; one inside a string is the author's.
    script = rsi_script() + "\n# \ufeff\n"
    tool = load_zip(
        make_zip(
            {**files(json_bom=False, script_bom=False), "calculate_rsi/script.py": script.encode()}
        )
    )[0]
    assert tool.source == script
