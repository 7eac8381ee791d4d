"""Make text that comes out of something the app runs (a script, an LLM, a build) storable.

PostgreSQL holds no NUL character in text and refuses the escape `\\u0000` in jsonb, yet output
may hold one: a script prints it, an LLM answers with it, a build step writes it. Nor can any
database, page or socket hold half of a UTF-16 surrogate pair, which UTF-8 cannot encode (the
harness cleans a sandbox's own output of them, `jazzmine.sandbox.harness.protocol.clean_text`;
what else reaches a run, a bash run's or a worker's, is cleaned here). Output is a record of
what happened, so it is never refused: each such character is stored as U+FFFD, the
replacement character, as undecodable bytes become when output is read (`errors="replace"`).
It is made so before it is stored and before it is sent, so a page, a socket and an agent all
read the same text, on SQLite as on PostgreSQL. Input from a person or an agent is refused
instead (`untrusted`).
"""

from __future__ import annotations

import re
from typing import Any

from jazzmine.jsontext import text_where

REPLACEMENT = "\ufffd"
# A NUL, or half of a surrogate pair: what no text column, page or socket keeps.
_UNKEEPABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """Return text with each NUL character and half of a surrogate pair replaced by U+FFFD."""
    return _UNKEEPABLE.sub(REPLACEMENT, text)


def storable_json(value: Any) -> Any:
    """Return JSON data with each such character in its strings and keys replaced by U+FFFD.

    Data without one (nearly all of it) comes back as the same object, uncopied.
    """
    return _replaced(value) if text_where(value, _UNKEEPABLE.search) is not None else value


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        # Two keys that differ only by such a character against a U+FFFD become one: the later
        # one's value.
        return {storable_text(str(key)): _replaced(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_replaced(item) for item in value]
    return value
