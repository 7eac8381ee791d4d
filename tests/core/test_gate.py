"""The gate's reading: every spelling that can run a tool is read as a call or as a doubt."""

from __future__ import annotations

import pytest

from jazzmine.core.tools import strip_fences
from jazzmine.gate import read_calls

TOOLS = {"get_orders", "list_items"}

# Each of these runs (or can run) get_orders under bashkit; the reading must never say no.
BASH_SPELLINGS = [
    "get_orders",
    "eval 'get_orders'",
    'eval "get_$x"',
    '"get_orders"',
    "get\\_orders",
    "get''_orders",
    '"get_"orders',
    "$'get_orders'",
    "$'\\x67et_orders'",
    "{ get_orders; }",
    "(get_orders)",
    "case x in x) get_orders;; esac",
    "case x in\n  y) list_items ;;\n  *) get_orders ;;\nesac",
    "if true; then get_orders; fi",
    "if false; then :; else get_orders; fi",
    "while true; do get_orders; break; done",
    "until false; do get_orders; break; done",
    "for i in 1 2; do get_orders; done",
    "select x in a; do get_orders; break; done",
    "X=1 get_orders",
    "X=1 Y=2 get_orders --status x",
    "cmd=get_orders; $cmd",
    'cmd=get_orders; "$cmd"',
    "t=get_; ${t}orders",
    "a=(get_orders); ${a[0]}",
    "printf -v c '%s' get_orders; $c",
    "read -r c <<< get_orders; $c",
    "f(){ get_orders; }; f",
    "function f { get_orders; }\nf",
    "list_items(){ get_orders; }; list_items",
    "command get_orders",
    "builtin get_orders",
    "exec get_orders",
    "echo x | xargs get_orders",
    "echo get_orders | xargs -I{} sh -c '{}'",
    "env get_orders",
    "nohup get_orders",
    "timeout 5 get_orders",
    "time get_orders",
    "nice get_orders",
    "sh -c get_orders",
    "bash -c 'get_orders'",
    ". ./f",
    "source ./f",
    "alias g=get_orders\ng",
    "shopt -s expand_aliases\nalias g=get_orders\ng",
    "trap get_orders EXIT",
    "awk 'BEGIN{system(\"get_orders\")}'",
    'awk "BEGIN{system(\\"get_\\" \\"orders\\")}"',
    "find . -maxdepth 0 -exec get_orders \\;",
    'echo " #"; get_orders',
    "echo ' #'; get_orders",
    "echo \\#; get_orders",
    "echo $(get_orders)",
    "echo `get_orders`",
    "x=$(get_orders)",
    "cat <(get_orders)",
    "echo hi > >(get_orders)",
    "cat <<EOF\n$(get_orders)\nEOF",
    "cat <<EOF\n`get_orders`\nEOF",
    "echo ${x:-$(get_orders)}",
    'echo "${x:-`get_orders`}"',
    "echo ${x/a/$(get_orders)}",
    "a[$(get_orders)]=1",
    "(( y = $(get_orders) ))",
    "echo $((1 + $(get_orders)))",
    'c=get_"orders"; echo ${x:-$($c)}',
    "get_orders&",
    "get_orders & wait",
    "! get_orders",
    "get_\\\norders",
    "true;get_orders",
    "false||get_orders",
    "true&&get_orders",
    "echo a|get_orders",
    "get*orders",
    "get_order?",
    "get_{orders,x}",
    "./get_orders",
    "/usr/bin/get_orders",
    "coproc get_orders",
    "mapfile -C get_orders -c 1 a",
    "enable get_orders",
    "type get_orders && get_orders",
    "if (",  # does not parse: never "calls nothing"
]


@pytest.mark.parametrize("script", BASH_SPELLINGS)
def test_no_bash_spelling_of_a_tool_call_reads_as_no_call(script: str) -> None:
    reading = read_calls(script, language="bash", tools=TOOLS)
    assert reading.may_call("get_orders"), reading


# Each of these makes bashkit read data again as code and run get_orders, though bashkit's own
# analysis sees no command there; most never spell the name (`\147` is octal for "g").
DATA_READ_AS_CODE = [
    "x='$(\\147et_orders)'; : \"${x@P}\"",
    "x='`\\147et_orders`'; y=${x@P}",
    "x='$(\\147et_orders)'; : \"${x@P }\"",
    "x='$(\\147et_orders)'; : \"${x@\\\nP}\"",
    "a=('$(\\147et_orders)'); : \"${a[0]@P}\"",
    "x='$(\\147et_orders)'; y=x; : \"${!y@P}\"",
    'n=get_; x="\\$(${n}orders)"; printf -v "P""S4" %s "$x"; set -eux; :',
    'n=get_; x="\\$(${n}orders)"; read -r PS4 <<< "$x"; shopt -s -o xtrace; :',
    'n=get_; x="\\$(${n}orders)"; declare PS4=$x; set -o "xtr""ace"; :',
    'n=get_; x="\\$(${n}orders)"; declare -A "m=([k]=$x)"',
    'n=get_; x="\\$(${n}orders)"; typeset -a arr="($x)"',
    'n=get_; x="arr=(\\$(${n}orders))"; declare -ga "$x"',
    "declare -a 'arr=($($'\"'\"'\\147et_orders'\"'\"'))'",
]


def _bashkit_calls(script: str) -> list[str]:
    """Run the script in bashkit with the two tools as builtins; return the tools it called."""
    from bashkit.scripted import ScriptedTool

    called: list[str] = []
    runner = ScriptedTool("tools", max_commands=100, max_loop_iterations=100, timeout_seconds=5)
    for name in sorted(TOOLS):
        runner.add_tool(
            name, name, callback=lambda _params, _stdin=None, n=name: called.append(n) or "{}\n"
        )
    runner.execute_sync(script)
    return called


@pytest.mark.parametrize("script", DATA_READ_AS_CODE)
def test_data_that_bashkit_reads_again_as_code_is_a_doubt_on_every_tool(script: str) -> None:
    assert "get_orders" in _bashkit_calls(script)  # the spelling really runs the tool
    reading = read_calls(script, language="bash", tools=TOOLS)
    assert reading.may_call("get_orders"), reading
    assert reading.doubts_about("list_items")  # the name is nowhere: any tool could be behind it


PYTHON_SPELLINGS = [
    "r = get_orders()",
    "```python\nr = ｇet_orders()\nemit_result(r)\n```",
    "```\nr = get_ｏrders()\n```",
    "f = get_orders\nf()",
    "[get_orders][0]()",
    "{'a': get_orders}['a']()",
    "globals()['get_orders']()",
    "globals()['get_' + 'orders']()",
    "vars()['get_orders']()",
    "locals()['x']()",
    "getattr(x, 'get_orders')()",
    "(lambda: get_orders)()()",
    "(lambda f=get_orders: f())()",
    "@get_orders\ndef f():\n    pass",
    "list(map(get_orders, [1]))",
    "[f() for f in [get_orders]]",
    "[f() for f in (get_orders,)]",
    "get_orders.__call__()",
    "def list_items():\n    return 1\nlist_items = get_orders\nlist_items()",
    "def f(list_items=get_orders):\n    return list_items()",
    "from x import get_orders",
    "import get_orders",
    "eval('get_orders()')",
    "exec('get_orders()')",
    "x = 'ｇet_orders'",
    "x = (",  # does not parse
    # the tool by another road than its name, or a namespace where its name is built
    "import __main__\n__main__.get_orders()",
    "sys.modules[__name__].get_orders()",
    "ns.get_orders()",
    "(lambda: 0).__globals__['get_' + 'orders']()",
    "f.__globals__.get('get_' + 'orders')()",
    "sys._getframe().f_globals['get_' + 'orders']()",
    "frame.f_globals['get_' + 'orders']()",
    "tb.tb_frame.f_locals['get_' + 'orders']()",
    "g.gi_frame.f_globals['get_' + 'orders']()",
    "__loader__.x['get_' + 'orders']()",
    "__spec__.x['get_' + 'orders']()",
]

# Bindings the parser keeps as text, not as a name: `list_items` may then be anything.
SHADOWING = [
    "try:\n    pass\nexcept Exception as list_items:\n    list_items()",
    "match x:\n    case list_items:\n        list_items()",
    "match x:\n    case [*list_items]:\n        pass",
    "match x:\n    case {'a': 1, **list_items}:\n        pass",
    "match x:\n    case [1, 2] as list_items:\n        pass",
    "import list_items.sub\nlist_items()",
]


@pytest.mark.parametrize("script", SHADOWING)
def test_a_tool_name_bound_in_text_is_a_doubt_on_that_tool(script: str) -> None:
    reading = read_calls(script, language="python", tools=TOOLS)
    assert reading.doubts_about("list_items"), reading


@pytest.mark.parametrize("body", PYTHON_SPELLINGS)
def test_no_python_spelling_of_a_tool_call_reads_as_no_call(body: str) -> None:
    # The gate reads what runs: the body with its fences stripped, as the assembler does.
    reading = read_calls(strip_fences(body), language="python", tools=TOOLS)
    assert reading.may_call("get_orders"), reading


def test_a_fenced_python_body_with_a_look_alike_letter_is_a_certain_call() -> None:
    reading = read_calls(
        strip_fences("```python\nｇet_orders()\n```"), language="python", tools=TOOLS
    )
    assert reading.tools == ["get_orders"] and not reading.uncertain


@pytest.mark.parametrize(
    "script",
    [
        "list_items | jq '.items[] | .name'",
        "x=$(list_items --limit 3)\necho \"$x\" | jq -r '.items[0]'",
        "for i in $(seq 1 3); do echo $((i + 1)); done\nlist_items",
        'if [ -n "$X" ]; then list_items; else echo none; fi',
        "list_items # get the items",
        # the safe neighbours of what reads data again as code stay certain
        "set -euo pipefail\nlist_items",
        "set +x\nlist_items",
        'arr=(a b)\nx=$(list_items)\necho "${x@Q}" "${arr[@]}"',
        "declare -r LIMIT=3\nexport MODE=fast\nlist_items",
    ],
)
def test_plain_bash_that_calls_only_other_tools_is_certain(script: str) -> None:
    reading = read_calls(script, language="bash", tools=TOOLS)
    assert not reading.may_call("get_orders")
    assert reading.uncertain == ()


def test_plain_python_calls_are_certain_with_their_line() -> None:
    script = (
        "items = list_items(limit=3)\n"
        "try:\n    n = len(items.data)\nexcept KeyError as e:\n    n = 0\n"
        "match n:\n    case 0:\n        pass\n    case [*rest] as whole:\n        pass\n"
        "emit_result({'n': n, 'at': datetime.datetime.now().isoformat()})\n"
    )
    reading = read_calls(script, language="python", tools=TOOLS)
    assert reading.calls == {"list_items": 1}
    assert reading.uncertain == ()


def test_a_doubt_about_one_named_tool_reaches_only_that_tool() -> None:
    reading = read_calls("echo get_orders", language="bash", tools=TOOLS)
    assert reading.may_call("get_orders") and not reading.may_call("list_items")


def test_a_command_that_changes_what_a_name_runs_is_a_doubt_on_every_tool() -> None:
    # bashkit runs `hash -p /path name` as bash does; its filesystem is closed to scripts
    # today, but the reading does not rely on that.
    reading = read_calls("hash -p /tmp/s list_items; list_items", language="bash", tools=TOOLS)
    assert reading.may_call("get_orders") and any("hash" in d.reason for d in reading.uncertain)


def test_eval_reaches_every_tool_and_says_why() -> None:
    reading = read_calls('eval "$X"', language="bash", tools=TOOLS)
    assert reading.may_call("get_orders") and reading.may_call("list_items")
    assert any("eval" in d.reason for d in reading.uncertain)


def test_the_reading_is_json_data_with_tools_and_reasons() -> None:
    reading = read_calls("list_items; eval x", language="bash", tools=TOOLS)
    data = reading.to_dict()
    assert data["tools"] == ["list_items"]
    assert data["uncertain"] and all(isinstance(d["reason"], str) for d in data["uncertain"])


def test_an_unknown_language_is_read_as_uncertain() -> None:
    assert read_calls("x", language="ruby", tools=TOOLS).may_call("get_orders")


@pytest.mark.parametrize(
    "script",
    [
        "import re\npattern = re.compile(r'#(\\d+)')\nlist_items()",
        "m = re.compile('[a-z]+', re.I).match('x')\nlist_items()",
        "items = list_items()\nn = len(getattr(items, 'data', None) or [])",
        "status = getattr(order, 'status')\nlist_items()",
    ],
)
def test_a_pattern_compiled_with_re_or_an_attribute_read_by_getattr_is_not_a_doubt(
    script: str,
) -> None:
    # Both read as "builds code" / "reads by name" before: such scripts went to a person
    # under the "unlisted" policy though they call only always-allowed tools.
    reading = read_calls(script, language="python", tools=TOOLS)
    assert reading.uncertain == (), reading
    assert not reading.may_call("get_orders")


@pytest.mark.parametrize(
    "script",
    [
        # `re` is not the module any more: its `compile` may be the builtin one
        "import builtins as re\nexec(re.compile('get_orders()', 's', 'exec'))",
        "re = __builtins__\nre.compile('x', 's', 'exec')",
        "from builtins import *\nre.compile('x', 's', 'exec')",
        "def f(re):\n    return re.compile('x', 's', 'exec')",
        "f = lambda re: re.compile('x', 's', 'exec')",
        "for re in [x]:\n    re.compile('x', 's', 'exec')",
        "[re for re in [x]]\nre.compile('x', 's', 'exec')",
        "del re\nre.compile('x', 's', 'exec')",
        "(re := x).compile('x', 's', 'exec')",
        "class C:\n    re = x\n    re.compile('x', 's', 'exec')",
        "try:\n    pass\nexcept Exception as re:\n    re.compile('x')",
        "global re\nre.compile('x')",
        "from x import y as re\nre.compile('x')",
        "from x import re\nre.compile('x')",
        "builtins.compile('get_orders()', 's', 'exec')",
        "x.compile('get_orders()', 's', 'exec')",
        # getattr with anything but a plain attribute's text, or getattr rebound
        "getattr(x, 'get_orders')()",
        "getattr(x, 'get_' + 'orders')()",
        "getattr(x, name)()",
        "getattr(x, *['get_orders'])()",
        "getattr(x, 'ｇet_orders')()",
        "getattr(x, '__globals__')['get_orders']()",
        "getattr(x, 'f_globals')['get_orders']()",
        "getattr(x, 'compile')('get_orders()', 's', 'exec')",
        "getattr(x, name='get_orders')()",
        "g = getattr\ng(x, 'get_orders')()",
        "getattr = lambda o, n: eval(n)\ngetattr(x, 'data')",
        "from m import *\ngetattr(x, 'data')",
        "def f(getattr):\n    return getattr(x, 'data')",
    ],
)
def test_re_compile_and_getattr_stay_doubts_when_they_may_be_something_else(script: str) -> None:
    reading = read_calls(script, language="python", tools=TOOLS)
    assert reading.may_call("get_orders"), reading


@pytest.mark.parametrize(
    "script",
    ["echo hi", 'x=$(printf "%s-%s" a b); echo "$x"', "test -n x && echo ok", "get_orders"],
)
def test_a_tool_named_like_a_shell_command_is_never_read_as_called_from_bash(script) -> None:
    # bash keeps its own `echo` and `printf`: such a tool is no builtin there, so `echo hi`
    # cannot call it. Read as a call, it sent every bash script of the sandbox to a person.
    reading = read_calls(script, language="bash", tools=TOOLS | {"echo", "printf", "test"})
    assert not {"echo", "printf", "test"} & set(reading.calls), reading
    assert not reading.uncertain, reading
    assert set(reading.calls) == ({"get_orders"} if script == "get_orders" else set())
    # In Python they are tools like any other.
    python = read_calls("echo(x=1)", language="python", tools=TOOLS | {"echo"})
    assert set(python.calls) == {"echo"}
