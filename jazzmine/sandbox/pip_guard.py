"""Run pip so that no package can send it to a URL, and read its refusal when one tries.

pip resolves a sandbox's dependencies from the wheels' own metadata, and a wheel on an
operator's index may declare a dependency by URL (`x @ http://10.0.0.5/x.whl`,
`x @ file:///etc/...`). pip fetches such a URL from the worker host, or copies the host's
file into the wheel set, unless the package came from PyPI's own file host; no option of
pip's refuses it. `pip_guard_site/sitecustomize.py`, loaded into the pip that `wheels`
runs, refuses it before anything opens the URL, and pip exits naming the package and the
URL; `url_refusal` turns that line back into a BuildError.

The pip that runs is the host's, with the host's configuration (indexes, find-links,
constraints, certificates, proxies): only the URL dependencies are taken away from it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import BuildError

SITE_DIR = Path(__file__).with_name("pip_guard_site")

# Both kept equal to their copies in pip_guard_site/sitecustomize.py, which runs inside pip.
GUARD_OPTION = "--jazzmine-refuse-url-dependencies"
REFUSED = "jazzmine refused a dependency given by URL:"

# What pip prints when the guard refused: the package, the file it read it from, the
# dependency and its URL (a PEP 508 URL holds no space).
_REFUSED = re.compile(
    re.escape(REFUSED) + r" (?P<package>\S+) \((?P<source>[^)]*)\) requires (?P<dependency>\S+)"
    r" from (?P<url>\S+)"
)
_SHOWN_URL_CHARS = 300


def guarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Return the environment of a guarded pip: `environ` (this process's) with the guard first
    on PYTHONPATH, so that Python imports its sitecustomize at start-up."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE_DIR), env.get("PYTHONPATH")]))
    return env


def url_refusal(output: str, log_tail: list[str]) -> BuildError | None:
    """Return the BuildError of a download the guard stopped, naming package and URL; or None."""
    match = _REFUSED.search(output)
    if match is None:
        return None
    package, url = match["package"], match["url"]
    if len(url) > _SHOWN_URL_CHARS:
        url = url[: _SHOWN_URL_CHARS - 3] + "..."
    return BuildError(
        step="download dependencies",
        package=package,
        message=(
            f"{package} ({match['source']}) declares its dependency {match['dependency']} "
            f"by URL: {url}. Dependencies come only from the operator's package indexes: "
            "the URL was refused and never fetched, and nothing was kept"
        ),
        log_tail=log_tail,
    )
