"""A script encodes and decodes with the idna codec, and with every other standard codec.

Python imports a codec's module the first time it is used, from the frame that asked, and the
harness's audit hook refuses every import a script's frame makes: `"bücher.example"
.encode("idna")` failed with "'import' is not allowed from a sandbox script", as did
punycode, utf-16-le, shift_jis, koi8_r... every codec the interpreter had not loaded yet. The
`namereplace` error handler and `\\N{...}` in unicode_escape failed too: C code imports
`unicodedata` for them through the script's own `__import__`, which refused it. The worker
now loads all of them before `ready` (harness/textcodecs.py, harness/scope.py).
"""

from __future__ import annotations

from jazzmine.core.tools import validate_script
from jazzmine.sandbox import Outcome, RunLimits

from .both_backends import sandbox
from .bwrap_support import runtime_dir
from .helpers import final, of_type
from .sample_tools import TEST_SANDBOX, make_registry

__all__ = ["runtime_dir", "sandbox"]  # the fixtures, used by name

LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15)

# A text each codec can encode, by codec; most of them not loaded when a sandbox starts.
TEXTS = {
    "idna": "bücher.example", "punycode": "bücher", "utf-16-le": "ü€", "utf_32_be": "ü€",
    "utf-7": "ü€", "utf-8-sig": "ü", "shift_jis": "日本語", "euc_jp": "日本語",
    "iso2022_jp": "日本語", "cp932": "日本語", "gb18030": "中文", "gbk": "中文", "big5": "中文",
    "hz": "中文", "euc_kr": "한국어", "koi8_r": "привет", "cp1251": "привет",
    "mac_roman": "café", "cp437": "café", "cp037": "café", "iso8859_15": "€",
    "unicode_escape": "ü€", "raw_unicode_escape": "ü€",
}  # fmt: skip

SCRIPT = f"""
out = {{}}
for name, text in {TEXTS!r}.items():
    try:
        data = text.encode(name)
        out[name] = [data.hex(), data.decode(name) == text]
    except Exception as exc:
        out[name] = str(exc)
try:
    out["idna, decoded"] = b"xn--bcher-kva.example".decode("idna")
    out["namereplace"] = "é".encode("ascii", "namereplace").decode("ascii")
    out["unicode_escape, by name"] = b"\\\\N{{BULLET}}".decode("unicode_escape")
except Exception as exc:
    out["failed"] = str(exc)
emit_result(out)
"""


def expected() -> dict:
    """What the same script gives outside any sandbox."""
    out: dict = {name: [text.encode(name).hex(), True] for name, text in TEXTS.items()}
    out["idna, decoded"] = "bücher.example"
    out["namereplace"] = "\\N{LATIN SMALL LETTER E WITH ACUTE}"
    out["unicode_escape, by name"] = "\N{BULLET}"
    return out


async def test_a_script_encodes_and_decodes_with_every_standard_codec(sandbox):
    assert validate_script(SCRIPT, make_registry().tool_names(TEST_SANDBOX)) == []
    events = await sandbox.run(SCRIPT, LIMITS)
    assert final(events).outcome is Outcome.RESULT, events
    assert of_type(events, "result")[0].data == expected()
