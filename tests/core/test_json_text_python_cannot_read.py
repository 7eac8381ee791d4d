"""JSON that Python's json refuses for reasons other than syntax is one clear error, not a crash.

A number of more than 4300 digits is a ValueError and deep nesting a RecursionError: valid JSON
elsewhere, so every reader of outside JSON goes through `json_read`.
"""

from __future__ import annotations

import pytest

from jazzmine.jsontext import JSONTextError, json_read

BIG = "1" + "0" * 5000

UNREADABLE = {
    "5000-digit integer": (BIG, "digits"),
    "negative 5000-digit integer": ("-" + BIG, "digits"),
    "big integer deep inside": '{"a": [1, {"b": ' + BIG + "}]}",
    "arrays 5000 deep": ("[" * 5000 + "]" * 5000, "nested too deeply"),
    "objects 5000 deep": ('{"a":' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    "mixed 3000 deep": ('[{"a":' * 1500 + "1" + "}]" * 1500, "nested too deeply"),
}


@pytest.mark.parametrize("case", UNREADABLE)
def test_unreadable_json_is_a_json_text_error(case: str) -> None:
    text = UNREADABLE[case]
    text, words = text if isinstance(text, tuple) else (text, "digits")
    with pytest.raises(JSONTextError, match=words) as caught:
        json_read(text)
    assert "0000" not in str(caught.value)  # the number is never quoted back
    assert caught.value.sentence[0].isupper()


@pytest.mark.parametrize("case", UNREADABLE)
def test_the_same_text_as_bytes_is_the_same_error(case: str) -> None:
    text = UNREADABLE[case]
    text = text[0] if isinstance(text, tuple) else text
    with pytest.raises(JSONTextError):
        json_read(text.encode())


def test_a_syntax_error_still_says_where() -> None:
    with pytest.raises(JSONTextError, match="line 2 column 8"):
        json_read('{"a": 1,\n  "b": }')


@pytest.mark.parametrize("raw", [b'{"a": "\xff"}', b"\xfe\xff\x00", b'["\xc3"]'])
def test_bytes_that_are_not_utf8_are_a_json_text_error(raw: bytes) -> None:
    with pytest.raises(JSONTextError, match="not UTF-8"):
        json_read(raw)


def test_readable_json_reads() -> None:
    assert json_read('{"n": ' + "9" * 4300 + "}")["n"] == int("9" * 4300)
    assert json_read("[" * 100 + "]" * 100) is not None
    assert json_read(b'{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}


LONE_SURROGATES = {
    "high alone": ('{"task": "\\ud800"}', "'task'"),
    "low inside text": ('{"a": [1, {"b": "x\\udfffy"}]}', "'a[1].b'"),
    "pair in the wrong order": ('["\\udc00\\ud83d"]', "'[0]'"),
    "capital escape": ('"\\uDBFF"', "surrogate pair ("),
    "in a key": ('{"x": {"\\ud800": 1}}', "in 'x.\\ud800'"),
}


@pytest.mark.parametrize("case", LONE_SURROGATES)
def test_half_of_a_surrogate_pair_is_refused_and_says_where(case: str) -> None:
    # json reads it into a str that UTF-8 cannot encode: stored or sent on, it raised far away.
    text, where = LONE_SURROGATES[case]
    for form in (text, text.encode()):
        with pytest.raises(JSONTextError, match="half of a UTF-16 surrogate pair") as caught:
            json_read(form)
        assert where in str(caught.value)


def test_a_whole_pair_and_an_escaped_backslash_are_read() -> None:
    assert json_read('"\\ud83d\\ude00"') == "\U0001f600"
    assert json_read('"\\\\ud800"') == "\\ud800"  # a backslash, then text: no escape
    assert json_read('{"k": "\U0001f600"}'.encode()) == {"k": "\U0001f600"}
