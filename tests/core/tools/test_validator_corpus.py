"""Data-driven tests of the validator: escape attempts, benign scripts and hand-rolled fuzzing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from jazzmine.core.tools.validator import validate_script

CORPUS = Path(__file__).parent / "corpus"
ESCAPES = sorted((CORPUS / "escapes").glob("*.py"))
BENIGN = sorted((CORPUS / "benign").glob("*.py"))
TOOLS = ("get_orders", "get_user", "search_products", "update_order", "send_email")


def read(path: Path) -> str:
    # newline="" keeps the bytes as written: a stray "\r" or NUL is part of some escapes.
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def test_the_corpora_are_big_enough() -> None:
    assert len(ESCAPES) >= 40
    assert len(BENIGN) >= 25


@pytest.mark.parametrize("path", ESCAPES, ids=lambda p: p.stem)
def test_every_escape_attempt_is_refused_for_a_reason_other_than_producing_nothing(
    path: Path,
) -> None:
    source = read(path)
    assert source.startswith("# Technique: "), "each escape names its technique on line 1"
    violations = validate_script(source, TOOLS)
    assert [v for v in violations if "unproductive" not in v], violations


@pytest.mark.parametrize("path", BENIGN, ids=lambda p: p.stem)
def test_every_benign_script_passes(path: Path) -> None:
    assert validate_script(read(path), TOOLS) == []


@pytest.mark.parametrize("path", BENIGN, ids=lambda p: p.stem)
def test_every_benign_script_passes_after_the_generators_preamble(path: Path) -> None:
    preamble = "# Available tools: " + ", ".join(TOOLS) + "\n# Helpers: emit_result\n"
    assert validate_script(preamble + read(path) + "\n", TOOLS) == []


def test_benign_scripts_fail_when_their_tools_are_not_allowed() -> None:
    source = read(CORPUS / "benign" / "01_total_revenue.py")
    (violation,) = validate_script(source, ["get_user"])
    assert "call to 'get_orders' is not allowed" in violation


def assert_well_formed(violations: object) -> None:
    assert isinstance(violations, list)
    for violation in violations:
        assert isinstance(violation, str) and violation.startswith("Line ")


def test_random_garbage_never_raises() -> None:
    rng = random.Random(1234)
    alphabet = "()[]{}:;.,'\"\\#@=+-*/%<>!&|^~ \t\n\r\f\x0b\x00abcxyz_019é€𝘦ｅ\ud800"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300)))
        assert_well_formed(validate_script(text, TOOLS))


def test_random_bytes_decoded_as_text_never_raise() -> None:
    rng = random.Random(99)
    for _ in range(300):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
        for text in (raw.decode("latin-1"), raw.decode("utf-8", errors="surrogateescape")):
            assert_well_formed(validate_script(text, TOOLS))


@pytest.mark.parametrize("path", ESCAPES + BENIGN, ids=lambda p: p.parent.name + "/" + p.stem)
def test_truncated_and_mangled_corpus_files_never_raise(path: Path) -> None:
    source = read(path)
    rng = random.Random(path.name)
    for cut in range(0, len(source) + 1, max(1, len(source) // 25)):
        assert_well_formed(validate_script(source[:cut], TOOLS))
        assert_well_formed(validate_script(source[cut:], TOOLS))
    for _ in range(20):
        chars = list(source)
        for _ in range(rng.randrange(1, 6)):
            position = rng.randrange(len(chars) + 1)
            chars.insert(position, rng.choice("([{:'\"\\\n\t_.@"))
        assert_well_formed(validate_script("".join(chars), TOOLS))


def test_random_token_soup_that_parses_never_raises() -> None:
    rng = random.Random(7)
    tokens = [
        "x", "get_user", "emit_result", "json", "getattr", "type", "_", "__class__", "(", ")",
        "[", "]", "{", "}", ".", ",", ":", "=", "lambda", "for", "in", "if", "else", "not",
        "'{0.a}'", "'s'", "1", "*", "**", "format", "\n", " ", "await", "yield", ":=",
    ]  # fmt: skip
    for _ in range(2000):
        text = " ".join(rng.choice(tokens) for _ in range(rng.randrange(1, 25)))
        assert_well_formed(validate_script(text, TOOLS))
