"""A script reads the same wherever it is read: here when small, in the checker process when big.

`runs.services` reads a big script in the checker process (`studio.checker`), with plain
arguments instead of the sandbox's registry and rows, and lists the tools the review gate's
reading found itself (`catalog.selectors.tools_called` reads the script where it is called).
Every script here, small or grown past the threshold, must give what the code of before gave:
the same assembled script, the same violations on the same lines, the same tools and whys.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from jazzmine.bash.generator import script_problems
from jazzmine.core.tools import ScriptGenerator, body_offset
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.selectors import tools_called
from jazzmine_web.catalog.services.registry import registry_for_sandbox
from jazzmine_web.runs.services import run_tools_called, script_check
from jazzmine_web.studio import checker
from jazzmine_web.studio.checker import PROCESS_THRESHOLD_CHARS
from jazzmine_web.studio.drawn import comments_that_run
from tests.web.helpers import allow_tools

pytestmark = pytest.mark.django_db(transaction=True)

PYTHON = {
    "calls": "o = get_orders(status='delivered')\nemit_result(len(o.data['orders']))\n",
    "fenced": "Here it is:\n```python\nu = get_user('U1')\nemit_result(u.data)\n```\nDone.\n",
    "alias": "f = update_order_status\nemit_result(f('ORD-1', 'cancelled').data)\n",
    "dynamic": "f = globals()['send_receipt']\nemit_result(getattr(f, 'x'))\n",
    "forbidden": "import os\ndata = open('/etc/passwd').read()\nemit_result(data)\n",
    "syntax": "def broken(:\n    pass\nemit_result(get_orders())\n",
    "unpublished": "emit_result(search_products('lamp').data)\n",
}
BASH = {
    "calls": "get_orders --status delivered | jq '.orders | length'\n",
    "eval": 'x="send_receipt ORD-1 a@b.c"\neval "$x"\n',
    "nested": "echo $(echo $(get_user U1))\n",
    "named": "echo update_order_status\n",
}


def _grown(body: str, language: str) -> str:
    """Return the body with harmless lines above it, past the checker's threshold."""
    line = "pad = [1, 2, 3]\n" if language == "python" else "echo pad\n"
    return line * (PROCESS_THRESHOLD_CHARS // len(line) + 1) + body


def _as_before(sandbox, body: str, language: str) -> tuple[str, list[str], list[dict]]:
    """Read a body as `runs.services` did before: the registry's generator, the catalog's tools."""
    if language == "python":
        generator = ScriptGenerator(registry_for_sandbox(sandbox))
        script = generator.assemble_script(body, sandbox.name)
        offset = body_offset(script)
        violations = generator.validate(script, sandbox.name)
        violations = [
            re.sub(r"^Line (\d+):", lambda m: f"Line {max(1, int(m[1]) - offset)}:", v, count=1)
            for v in violations
        ]
    else:
        script, offset = body, 0
        names = [t.name for t in sandbox.tool_rows()]
        violations = script_problems(
            body, max_chars=settings.JAZZMINE_MAX_BASH_CHARS, tools=names
        ) or comments_that_run(body)
    tools = tools_called(
        script=script, tools=sandbox.tool_rows(), language=language, body_offset=offset
    )
    return script, violations, tools


@pytest.fixture
def shop(ecommerce):
    allow_tools(ecommerce, "get_orders")  # one always allowed, the others not
    Tool.objects.filter(sandbox=ecommerce, name="search_products").update(published=False)
    return ecommerce


@pytest.mark.parametrize("size", ["small", "big"])
@pytest.mark.parametrize(
    ("language", "body"),
    [("python", b) for b in PYTHON.values()] + [("bash", b) for b in BASH.values()],
    ids=[f"python-{k}" for k in PYTHON] + [f"bash-{k}" for k in BASH],
)
def test_a_script_reads_as_it_did(shop, language, body, size, monkeypatch) -> None:
    if size == "big":
        body = _grown(body, language)
    handed = []
    submit = checker._checker.submit
    monkeypatch.setattr(
        checker._checker, "submit", lambda fn, *a: handed.append(fn.__name__) or submit(fn, *a)
    )
    script, violations = script_check(sandbox=shop, body=body, language=language)
    tools = run_tools_called(sandbox=shop, body=body, language=language, script=script)
    # Read in the checker process when big: checked (or assembled), then read by the gate
    # (unless the script that runs is small: an answer's fence, taken from prose around it).
    # A bash body is checked, then (when that finds nothing) held to what its page draws.
    first = ["python_script"] if language == "python" else ["script_problems"]
    if language == "bash" and not violations:
        first.append("comments_that_run")
    assert handed == [
        *(first if len(body) >= PROCESS_THRESHOLD_CHARS else []),
        *(["script_read"] if len(script) >= PROCESS_THRESHOLD_CHARS else []),
    ]
    assert (size == "big") == bool(handed)
    assert (script, violations, tools) == _as_before(shop, body, language)
