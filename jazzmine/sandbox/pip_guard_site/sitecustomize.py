"""Make the `pip download` of a sandbox's wheels refuse any dependency given by URL.

Python imports this at start-up in the pip that `jazzmine.sandbox.wheels` runs, and in no
other process: `jazzmine.sandbox.pip_guard` puts this directory on that pip's PYTHONPATH
alone. It runs inside pip, so it imports the standard library and pip, never jazzmine.

A wheel's metadata may name a dependency by URL (`Requires-Dist: x @ http://10.0.0.5/x.whl`,
`x @ file:///etc/...`). pip refuses that only for packages it downloaded from PyPI's own file
host; from any other index it fetches the URL from the worker host, or copies the host's
file into the wheel set, and no option turns that off. The refusal here sits where pip turns
a requirement's URL into the link it later fetches (`InstallRequirement.__init__`), whichever
resolver made the requirement, whatever marker or extra it came under: the URL is refused
before anything opens it. A requirement from a command line or a requirements or
constraints file (the operator's pip configuration) arrives with its origin as text and is
left alone; one a package declared arrives with that package as its origin.

Fail closed: the download's command line carries `GUARD_OPTION`, which pip does not know.
It is taken away only once the refusal is in place; a pip that started without this file,
or in which it could not be put in place, stops at that unknown option before reading an
index.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import inspect
import os
import sys

# Both kept equal to their copies in `jazzmine.sandbox.pip_guard`, which reads pip's output.
GUARD_OPTION = "--jazzmine-refuse-url-dependencies"
REFUSED = "jazzmine refused a dependency given by URL:"


def _refuse_url_dependencies() -> None:
    """Make pip raise, naming the package and the URL, when a package depends on a URL."""
    from pip._internal.exceptions import InstallationError
    from pip._internal.req.req_install import InstallRequirement

    init = InstallRequirement.__init__
    signature = inspect.signature(init)
    if not {"req", "comes_from"} <= signature.parameters.keys():
        # Another pip than the ones this was written for: refuse to run rather than guess.
        raise RuntimeError(f"cannot guard this pip's InstallRequirement{signature}")

    def guarded_init(self: InstallRequirement, *args: object, **kwargs: object) -> None:
        arguments = signature.bind(self, *args, **kwargs).arguments
        req, comes_from = arguments.get("req"), arguments.get("comes_from")
        url = getattr(req, "url", None)
        if url and not isinstance(comes_from, str):
            raise InstallationError(_refusal(comes_from, req, url))
        init(self, *args, **kwargs)

    InstallRequirement.__init__ = guarded_init  # type: ignore[method-assign]


def _refusal(comes_from: object, req: object, url: str) -> str:
    """Say who declared the URL (name, and the file pip read it from) and which it is."""
    parent = getattr(comes_from, "name", None) or "(a requirement)"
    link = getattr(comes_from, "link", None)
    source = getattr(link, "filename", None) or "unknown file"
    return f"{REFUSED} {parent} ({source}) requires {getattr(req, 'name', '?')} from {url}"


def _shadowed_sitecustomize() -> None:
    """Run the sitecustomize this one hides (an interpreter's own), as Python would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


if GUARD_OPTION in sys.argv:
    _refuse_url_dependencies()
    sys.argv.remove(GUARD_OPTION)  # only now: until here, pip would stop at it
_shadowed_sitecustomize()
