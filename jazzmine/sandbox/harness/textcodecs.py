"""Every codec of the standard library loaded before a script runs, and none imported for it.

Python imports a codec's module on its first use (`"x".encode("idna")` imports
`encodings.idna`), from whichever frame asked: for a script, its own, where the audit hook
refuses every import. So the worker imports each codec module of the standard library's
`encodings` package before `ready`, while only the standard library can answer an import,
and puts a search function in front of encodings' own that answers from those modules alone.
Any other name, however it is spelled (case, punctuation, aliases, dots, slashes), is an
unknown encoding, a LookupError as anywhere else; a lookup never imports a module on anyone's
behalf, so it can never become a way for a script to import one. The audit hook stays as it
was, behind this, for whatever else would try.
"""

from __future__ import annotations

import codecs
import contextlib
import encodings
import os
import sys

# How codec modules are stored: as sources, or only compiled in a sourceless standard library.
_MODULE_SUFFIXES = ("py", "pyc")


def preload_codecs() -> None:
    """Import every standard codec and make lookups answer from those alone.

    Call it before any wheel is on `sys.path` and before any tool is loaded: what it imports
    then (idna's `stringprep` and `unicodedata`, the CJK codecs' extension modules) can come
    from the standard library only, and the search it puts in front is the first one asked,
    ahead of any a tool's package registers. It costs about 20 ms and 3 MB of the worker's.
    """
    directory = os.path.dirname(encodings.__file__)
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        entries = []  # a zipped standard library: only the codecs it loaded at start work
    for entry in entries:
        name, _dot, suffix = entry.partition(".")
        if suffix in _MODULE_SUFFIXES and name.isidentifier() and not name.startswith("_"):
            with contextlib.suppress(ImportError):  # mbcs and oem exist on Windows only
                __import__(f"encodings.{name}")
    # Those the interpreter loaded at start (utf_8...) count too; `aliases` is no codec.
    loaded = frozenset(
        name.removeprefix("encodings.")
        for name, module in list(sys.modules.items())
        if name.startswith("encodings.") and hasattr(module, "getregentry")
    )
    _search_only(loaded)


def _search_only(loaded: frozenset[str]) -> None:
    """Put a search function in front of encodings' own that never lets it import a module."""
    search = encodings.search_function
    normalize = encodings.normalize_encoding
    aliases = encodings.aliases.aliases  # the very dict `search` reads and adds to

    def search_loaded(name: str) -> codecs.CodecInfo | None:
        # The module `search` would import first: the alias's if the name has one, else the
        # name's own. Loaded, `search` finds it in sys.modules and imports nothing; anything
        # else it would import (or fail to) from the frame that asked, so it is not asked.
        spelled = normalize(name)
        module = aliases.get(spelled) or aliases.get(spelled.replace(".", "_")) or spelled
        return search(name) if module in loaded else None

    codecs.unregister(search)
    codecs.register(search_loaded)
