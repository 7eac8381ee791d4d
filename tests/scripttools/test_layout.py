"""Loading and exporting `<tool_name>/{tool.json, script}` from folders and zips, safely."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile

import pytest

from jazzmine.scripttools import (
    ScriptTool,
    ScriptToolError,
    export_zip,
    load_tool_dir,
    load_tools_dir,
    load_zip,
    save_tool_dir,
)
from jazzmine.scripttools.layout import MAX_SCRIPT_BYTES

from .samples import FIXTURES, PRICES, RSI, rsi_json, rsi_script


def make_zip(entries: dict[str, bytes | str], *, symlinks: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in entries.items():
            info = zipfile.ZipInfo(name)
            mode = stat.S_IFLNK | 0o777 if name in symlinks else stat.S_IFREG | 0o644
            info.external_attr = mode << 16
            archive.writestr(info, content)
    return buffer.getvalue()


def write_tool(parent, name="calculate_rsi", data=None, script=None, script_name="script.py"):
    folder = parent / name
    folder.mkdir(parents=True)
    text = data if isinstance(data, str) else json.dumps(data or rsi_json())
    (folder / "tool.json").write_text(text)
    (folder / script_name).write_text(script if script is not None else rsi_script())
    return folder


def test_it_loads_a_python_tool_folder():
    tool = load_tool_dir(RSI)
    assert tool.name == "calculate_rsi"
    assert tool.runtime == "python3" and tool.script_filename == "script.py"
    assert tool.always_allow is True
    assert tool.timeout == 300
    assert tool.required == ["symbol"]
    assert tool.sample_args() == {"period": 14, "signal": "label"}


def test_it_loads_a_node_tool_folder():
    assert load_tool_dir(PRICES).runtime == "node"


def test_it_loads_a_catalog_folder_of_tools():
    assert [t.name for t in load_tools_dir(FIXTURES)] == ["calculate_rsi", "summarize_prices"]


def test_a_folder_round_trip_gives_the_same_tools(tmp_path):
    originals = load_tools_dir(FIXTURES)
    for tool in originals:
        save_tool_dir(tool, tmp_path)
    again = load_tools_dir(tmp_path)
    assert again == originals
    assert (tmp_path / "summarize_prices" / "script.js").read_text() == (
        PRICES / "script.js"
    ).read_text()


def test_a_zip_round_trip_gives_the_same_tools_and_the_same_bytes():
    originals = load_tools_dir(FIXTURES)
    data = export_zip(originals)
    assert load_zip(data) == originals
    assert export_zip(load_zip(data)) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert sorted(archive.namelist()) == [
            "calculate_rsi/script.py",
            "calculate_rsi/tool.json",
            "summarize_prices/script.js",
            "summarize_prices/tool.json",
        ]


def test_export_writes_tool_json_as_the_spec_does():
    text = load_tool_dir(RSI).to_json_text()
    assert text.endswith("}\n") and text.startswith('{\n  "name": "calculate_rsi"')
    assert "timeout" not in text  # the default is not written


def test_unknown_tool_json_keys_survive_the_round_trip():
    data = rsi_json() | {"author": "ada", "timeout": 45}
    tool = ScriptTool.from_json_dict(data, source=rsi_script())
    assert tool.timeout == 45 and tool.extra == {"author": "ada"}
    assert json.loads(tool.to_json_text()) == data


def test_it_loads_a_zip_with_the_tool_at_its_root():
    data = make_zip({"tool.json": json.dumps(rsi_json()), "script.py": rsi_script()})
    assert [t.name for t in load_zip(data)] == ["calculate_rsi"]


def test_it_skips_macos_noise_in_zips():
    data = make_zip({
        "calculate_rsi/tool.json": json.dumps(rsi_json()),
        "calculate_rsi/script.py": rsi_script(),
        "__MACOSX/calculate_rsi/._tool.json": b"\x00",
        "calculate_rsi/.DS_Store": b"\x00",
    })  # fmt: skip
    assert len(load_zip(data)) == 1


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../calculate_rsi/tool.json", "'..'"),
        ("calculate_rsi/../../etc/tool.json", "'..'"),
        ("/etc/calculate_rsi/tool.json", "absolute"),
        ("C:/calculate_rsi/tool.json", "absolute"),
        ("calculate_rsi\\..\\tool.json", "backslashes"),
    ],
)
def test_it_refuses_zip_paths_that_leave_the_archive(name, problem):
    data = make_zip({name: json.dumps(rsi_json()), "calculate_rsi/script.py": rsi_script()})
    with pytest.raises(ScriptToolError) as caught:
        load_zip(data)
    assert caught.value.file == name and problem in caught.value.problem


def test_it_refuses_symlinks_in_zips():
    data = make_zip(
        {"calculate_rsi/tool.json": "/etc/passwd", "calculate_rsi/script.py": rsi_script()},
        symlinks=("calculate_rsi/tool.json",),
    )
    with pytest.raises(ScriptToolError, match="symbolic link"):
        load_zip(data)


def test_it_refuses_a_script_over_the_size_limit():
    data = make_zip({
        "calculate_rsi/tool.json": json.dumps(rsi_json()),
        "calculate_rsi/script.py": "#" * (MAX_SCRIPT_BYTES + 1),
    })  # fmt: skip
    with pytest.raises(ScriptToolError, match="too large") as caught:
        load_zip(data)
    assert caught.value.file == "calculate_rsi/script.py"


def test_it_refuses_what_is_not_a_zip():
    with pytest.raises(ScriptToolError, match="not a zip"):
        load_zip(b"PK nope")


def test_it_loads_a_folder_of_tools_compressed_as_it_is():
    # What macOS's Compress (or Windows' Send to) makes of a folder of tools: was refused as
    # "nested too deep".
    data = make_zip({
        "tools/calculate_rsi/tool.json": json.dumps(rsi_json()),
        "tools/calculate_rsi/script.py": rsi_script(),
        "__MACOSX/tools/calculate_rsi/._tool.json": b"\x00",
        "tools/.DS_Store": b"\x00",
    })  # fmt: skip
    assert [t.name for t in load_zip(data)] == ["calculate_rsi"]


@pytest.mark.parametrize(
    "entries",
    [
        {"a/tools/calculate_rsi/tool.json": "{}", "a/tools/calculate_rsi/script.py": ""},
        {"tools/calculate_rsi/tool.json": "{}", "other/calculate_rsi/script.py": ""},
        {"tools/calculate_rsi/tool.json": "{}", "tools/script.py": ""},
    ],
)
def test_it_refuses_tools_nested_too_deep(entries):
    with pytest.raises(ScriptToolError, match="nested too deep") as caught:
        load_zip(make_zip(entries))
    assert "or one folder that holds them" in caught.value.problem


def test_broken_json_names_the_file_and_the_line(tmp_path):
    folder = write_tool(tmp_path, data='{\n  "name": "calculate_rsi",\n  oops\n}')
    with pytest.raises(ScriptToolError) as caught:
        load_tool_dir(folder)
    assert caught.value.file == "calculate_rsi/tool.json"
    assert "invalid JSON at line 3" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("description"), "missing field 'description'"),
        (lambda d: d.pop("parameters"), "missing field 'parameters'"),
        (
            lambda d: d.update(always_allow="yes"),
            "'always_allow' must be true or false, not a string",
        ),
        (lambda d: d.update(timeout="5m"), "'timeout' must be a number of seconds"),
        (lambda d: d.update(timeout=-1), "timeout must be positive"),
        (lambda d: d.update(parameters=[]), "'parameters' must be a JSON object"),
        (lambda d: d.update(name=7), "'name' must be a string, not a number"),
        (lambda d: d.update(secrets="POLYGON_API_KEY"), "'secrets' must be a list of strings"),
    ],
)
def test_wrong_fields_name_the_file_and_the_problem(tmp_path, change, message):
    data = rsi_json()
    change(data)
    with pytest.raises(ScriptToolError, match=message) as caught:
        load_tool_dir(write_tool(tmp_path, data=data))
    assert caught.value.file == "calculate_rsi/tool.json"


def test_it_refuses_a_name_that_differs_from_its_folder(tmp_path):
    with pytest.raises(ScriptToolError, match="does not match its folder"):
        load_tool_dir(write_tool(tmp_path, name="rsi"))


def test_it_refuses_a_folder_without_a_script(tmp_path):
    folder = write_tool(tmp_path)
    (folder / "script.py").unlink()
    with pytest.raises(ScriptToolError, match="missing file"):
        load_tool_dir(folder)


def test_it_refuses_a_folder_with_two_scripts(tmp_path):
    folder = write_tool(tmp_path)
    (folder / "script.js").write_text("")
    with pytest.raises(ScriptToolError, match="one script"):
        load_tool_dir(folder)


def test_it_refuses_extra_files(tmp_path):
    folder = write_tool(tmp_path)
    (folder / "helper.py").write_text("")
    with pytest.raises(ScriptToolError, match="unexpected file") as caught:
        load_tool_dir(folder)
    assert caught.value.file == "calculate_rsi/helper.py"


def test_it_refuses_a_symlinked_tool_json(tmp_path):
    folder = write_tool(tmp_path)
    (folder / "tool.json").unlink()
    os.symlink(RSI / "tool.json", folder / "tool.json")
    with pytest.raises(ScriptToolError, match="symbolic link"):
        load_tool_dir(folder)


def test_saving_a_tool_that_changed_language_removes_the_old_script(tmp_path):
    tool = load_tool_dir(RSI)
    save_tool_dir(tool, tmp_path)
    tool.runtime = "node"
    tool.source = "process.stdout.write('{}')\n"
    save_tool_dir(tool, tmp_path)
    assert sorted(p.name for p in (tmp_path / "calculate_rsi").iterdir()) == [
        "script.js",
        "tool.json",
    ]


def test_the_model_translates_its_schema_into_tool_parameters():
    parameters = {p.name: p for p in load_tool_dir(RSI).tool_parameters()}
    assert parameters["symbol"].required and parameters["symbol"].type == "string"
    assert parameters["period"].default == 14 and not parameters["period"].required
    assert parameters["signal"].options == ["label", "none"]


@pytest.mark.parametrize("noise", [[], [".git"], [".DS_Store", "Thumbs.db"]])
def test_a_folder_of_no_tool_is_refused_as_an_empty_zip_is(tmp_path, noise):
    for name in noise:
        if name == ".git":
            (tmp_path / name).mkdir()
        else:
            (tmp_path / name).write_text("")
    with pytest.raises(ScriptToolError, match="holds no tool"):
        load_tools_dir(tmp_path)
    with pytest.raises(ScriptToolError, match="holds no tool"):
        load_zip(export_zip([]))
