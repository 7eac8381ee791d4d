"""The second wall, run in a real sandbox with the validator skipped: every escape fails there.

Runs go straight to the runner, so nothing checks the scripts before they run: what stops
them is the harness (restricted builtins, guarded attribute access, the audit hook) and the
container.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

CORPUS = Path(__file__).parents[1] / "core" / "tools" / "corpus"
ESCAPES = sorted((CORPUS / "escapes").glob("*.py"))
BENIGN = sorted((CORPUS / "benign").glob("*.py"))
CANARY = "canary-7f3a9c"
# Escapes whose only "win" is a binding rule the validator needs for its static soundness
# argument (rebinding a name, patching the script's own copy of a module, passing a tool
# around, a cookie ast.parse ignores): at run time they reach nothing, which the canary and
# the results below show.
HARMLESS_AT_RUN_TIME = {
    "46_monkeypatch_json", "49_rebind_print", "51_except_as_module", "52_walrus_rebind",
    "53_comprehension_target_rebind", "54_lambda_param_rebind", "55_del_builtin",
    "56_global_statement", "61_tool_as_argument", "67_hasattr_probe", "68_coding_cookie_utf7",
}  # fmt: skip

# More spellings of the same attacks than the corpus holds, each aimed at os.system.
EXTRA_ESCAPES = {
    "catch_warnings_chain": (
        "for c in ().__class__.__base__.__subclasses__():\n"
        "    if c.__name__ == 'catch_warnings':\n"
        "        c()._module.__builtins__['__import__']('os').system('id')\n"
        "emit_result(1)\n"
    ),
    "getattr_computed": (
        "g = getattr\nk = g((), '_' + '_class_' + '_')\n"
        "emit_result(str(g(g(k, '__base__'), '__subclasses__')()))\n"
    ),
    "unbound_format_of_a_tool": "emit_result(str.format('{0.__globals__}', get_orders))\n",
    "format_via_getattr": "f = getattr('{0.__class__}', 'format')\nemit_result(f(1))\n",
    "generator_frame_back": (
        "g = (x for x in [1])\nf = g.gi_frame.f_back\nemit_result(str(f.f_globals))\n"
    ),
    "type_of_type_builds_a_class": ("T = type(type(1))\nC = T('C', (), {})\nemit_result(str(C))\n"),
    "traceback_walk": (
        "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__\n"
        "emit_result(str(t.tb_frame.f_globals))\n"
    ),
    "builtins_dict_import": "emit_result(str(__builtins__['__import__']('os')))\n",
    "setattr_on_a_class": "ToolResponse.to_dict = len\nemit_result(1)\n",
    "method_self": "emit_result(str(get_orders.__self__))\n",
    "guard_rebinding": "__jazzmine_getattr__ = lambda o, n: 1\nemit_result(1)\n",
    "guard_swap_through_builtins": (
        "__builtins__['__jazzmine_getattr__'] = lambda o, n: 'swapped'\n"
        "emit_result(get_orders.__globals__)\n"
    ),
    "guard_swap_through_a_bound_name": (
        "b = __builtins__\nb['__jazzmine_getattr__'] = lambda o, n: 'swapped'\n"
        "emit_result(get_orders.__globals__)\n"
    ),
    "module_view_reach": "emit_result(str(re.compile('x').__class__))\n",
    # A class pattern reads attributes by keyword, with no attribute node for the guards to see.
    "match_class_pattern_globals": (
        "def grab(obj, **names):\n    K = type(obj)\n    match obj:\n"
        "        case K(__globals__=g) if 'g' in names:\n            return g\n"
        "        case K(environ=e) if 'environ' in names:\n            return e\n"
        "emit_result(dict(grab(grab(get_orders, g=1)['os'], environ=1)))\n"
    ),
    "match_class_pattern_positional": (
        "F = type(get_orders)\nmatch get_orders:\n    case F(__globals__ as g):\n"
        "        emit_result(str(g))\n"
    ),
    "match_mapping_then_class": (
        "match {'t': get_orders}:\n    case {'t': object(__globals__=g)}:\n"
        "        emit_result(dict(g['os'].environ))\n"
    ),
    # `from m import name` reads `name` off the real module: the lazily imported ones too.
    "from_lazy_module_import_builtins": (
        "from _strptime import __builtins__ as b\nfrom _strptime import locale\n"
        "g = b['getattr']\nemit_result(dict(g(g(g(locale, 'sys'), 'modules')['os'], 'environ')))\n"
    ),
    "from_time_import": "from time import sleep\nemit_result(str(sleep))\n",
    "import_lazy_module": "import _strptime\nemit_result(str(_strptime))\n",
    "import_os": "import os\nemit_result(dict(os.environ))\n",
    "import_dunder_call": (
        "i = __builtins__['__import__']\nm = i('_strptime', None, None, ('__builtins__',), 0)\n"
        "emit_result(str(m))\n"
    ),
}
# A tool hands the script the real thing (as a validator slip and a guard slip together
# would): the audit hook still refuses each action made from the script's frames.
HANDED_OVER = {
    "os.system": "hand_over('os.system'); handed('id')",
    "subprocess.run": "hand_over('subprocess.run'); handed(['id'])",
    "exec": "hand_over('exec'); handed('x = 1')",
    "compile": "hand_over('compile'); handed('1', 's', 'eval')",
    "__import__": "hand_over('__import__'); handed('xml.dom')",
    "open": "hand_over('open'); handed('/etc/hostname')",
    "os.fork": "hand_over('os.fork'); handed()",
    "os.execv": "hand_over('os.execv'); handed('/bin/sh', ['sh'])",
    "os.posix_spawn": "hand_over('os.posix_spawn'); handed('/bin/sh', ['sh'], {})",
    # A tool's wrapper made to call os.system vouches for nothing: the script is acting.
    "a tool wrapper's swapped callee": (
        "hand_over('swap_callee'); swap = handed; hand_over('os.system')\n"
        "    swap(get_orders, handed)\n"
        "    r = get_orders('echo SHELL-RAN')\n    emit_result(r.message)"
    ),
}


@pytest.fixture
async def pool(runner, wall_image, limits):
    async with WarmPool(runner, wall_image, limits, size=2) as pool:
        yield pool


async def run(pool: WarmPool, script: str) -> list:
    request = RunRequest(script=script, secrets={"API_KEY": CANARY})
    return await collect(pool.run(request))


def leaked(events: list) -> bool:
    return any(CANARY in event.to_json() for event in events)


@pytest.mark.parametrize("path", ESCAPES, ids=lambda p: p.stem)
async def test_every_corpus_escape_fails_at_run_time_without_the_validator(pool, path):
    events = await run(pool, path.read_text(encoding="utf-8"))
    assert not leaked(events)
    if path.stem in HARMLESS_AT_RUN_TIME:
        return
    assert final(events).outcome is Outcome.SCRIPT_ERROR, events


@pytest.mark.parametrize("name", sorted(EXTRA_ESCAPES))
async def test_other_spellings_of_the_escapes_fail_too(pool, name):
    events = await run(pool, EXTRA_ESCAPES[name])
    assert final(events).outcome is Outcome.SCRIPT_ERROR, events
    assert not leaked(events)


@pytest.mark.parametrize("name", sorted(HANDED_OVER))
async def test_the_audit_hook_refuses_what_the_script_itself_does_with_a_real_callable(pool, name):
    script = f"try:\n    {HANDED_OVER[name]}\n    emit_result('ran')\nexcept Exception as e:\n"
    script += "    emit_result(str(e))\n"
    events = await run(pool, script)
    (result,) = of_type(events, "result")
    assert "is not allowed from a sandbox script" in result.data, result.data
    assert "SHELL-RAN" not in str(events)


async def test_tools_still_import_and_spawn_behind_the_audit_hook(pool):
    events = await run(pool, "hand_over('os.system')\nemit_result(callable(handed))\n")
    assert final(events).outcome is Outcome.RESULT


@pytest.mark.parametrize("path", BENIGN, ids=lambda p: p.stem)
async def test_every_benign_script_still_runs(pool, path):
    events = await run(pool, path.read_text(encoding="utf-8"))
    assert final(events).outcome is Outcome.RESULT, of_type(events, "error")
