"""script.js is read as node reads it: a name a page draws like another is refused, text in
strings, comments and patterns is not, and code the parser cannot read is read as code."""

from __future__ import annotations

import pytest

from jazzmine.scripttools.legible import javascript_names_read_otherwise


@pytest.mark.parametrize(
    "source",
    [
        "const r\u0435sult = 1;",  # Cyrillic е
        "obj.\u1d52rder = 1;",  # a modifier letter
        "label\u0430: for (;;) { break label\u0430; }",
        "function f(\u0430rg) { return \u0430rg; }",
        "const x = `${\u0430}`;",  # a template's field is code
        "let \\u0061 = 1;",
        "obj.\\u{62} = 2;",
        "const {\\u0063: d} = o;",
        # Not JavaScript the parser can read: read as code, not given the benefit of a doubt.
        "const x = ((( \u0430pi_key",
        "if (x) { \u0430pi_key = 1 ] )",
    ],
)
def test_a_name_drawn_otherwise_is_found_on_its_line(source: str) -> None:
    found = javascript_names_read_otherwise(f"// line one\n{source}\n")
    assert found and found[0][0] == 2, found


@pytest.mark.parametrize(
    "source",
    [
        "const s = 'Отчёт ☃ naïve';",
        'const s = "\\u00e9\\u{1F600}";',
        "const s = `größe ${'é' + `ü`}`;",
        "// Отчёт\n/* ☃\n é */ const a = 1;",
        "const ok = /[éè☃]+/u.test(s);",
        "#!/usr/bin/env node ☃\nconsole.log(1);",
        "const plain = 1;",
    ],
)
def test_text_drawn_as_it_runs_is_welcome(source: str) -> None:
    assert javascript_names_read_otherwise(source) == []
