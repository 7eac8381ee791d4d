"""Under "review when a tool that is not always-allowed is called", no spelling slips past review.

Attacks through the agent API: get_orders is always allowed, get_user is not; every script
below can run get_user, so each one must wait for a person (or be refused outright), and the
reviewer is told get_user may be called and why.
"""

from __future__ import annotations

import pytest

from jazzmine_web.runs.models import Run

from .conftest import submit

pytestmark = pytest.mark.django_db

BASH_SPELLINGS = [
    "eval 'get_user --user_id U-1'",
    'eval "get_$kind --user_id U-1"',
    '"get_user" --user_id U-1',
    "get\\_user --user_id U-1",
    "get''_user --user_id U-1",
    "$'get_user' --user_id U-1",
    "$'\\x67et_user' --user_id U-1",
    "{ get_user --user_id U-1; }",
    "case a in a) get_user --user_id U-1 ;; esac",
    "if true; then get_user --user_id U-1; fi",
    "if false; then :; else get_user --user_id U-1; fi",
    "for i in 1; do get_user --user_id U-1; done",
    "while true; do get_user --user_id U-1; break; done",
    "X=1 get_user --user_id U-1",
    "cmd=get_user; $cmd --user_id U-1",
    "t=get_; ${t}user --user_id U-1",
    "f(){ get_user --user_id U-1; }; f",
    "get_orders(){ get_user --user_id U-1; }; get_orders",
    "command get_user --user_id U-1",
    "builtin get_user --user_id U-1",
    "echo U-1 | xargs get_user --user_id",
    "exec get_user --user_id U-1",
    "env get_user --user_id U-1",
    "timeout 5 get_user --user_id U-1",
    "sh -c 'get_user --user_id U-1'",
    'echo " #"; get_user --user_id U-1',
    "echo \\#; get_user --user_id U-1",
    "echo $(get_user --user_id U-1)",
    "echo `get_user --user_id U-1`",
    "cat <(get_user --user_id U-1)",
    "echo x > >(get_user --user_id U-1)",
    ". /tmp/script",
    "source /tmp/script",
    "alias g=get_user\ng --user_id U-1",
    "cat <<EOF\n$(get_user --user_id U-1)\nEOF",
    "echo ${x:-$(get_user --user_id U-1)}",
    "a[$(get_user --user_id U-1)]=1",
    'c=get_"user"; echo ${x:-$($c --user_id U-1)}',
    "get_user --user_id U-1 &\nwait",
    "! get_user --user_id U-1",
    "get_\\\nuser --user_id U-1",
    "get_orders;get_user --user_id U-1",
    "false||get_user --user_id U-1",
    "get_orders && get_user --user_id U-1",
    "get_orders | get_user --user_id U-1",
    "trap 'get_user --user_id U-1' EXIT",
    "awk 'BEGIN{system(\"get_user --user_id U-1\")}'",
    "find / -maxdepth 0 -exec get_user --user_id U-1 \\;",
    "get_use? --user_id U-1",
    "get_{user,x} --user_id U-1",
    "/usr/bin/get_user --user_id U-1",
    "get_orders --status 'x' # ' ; get_user --user_id U-1",
]

PYTHON_SPELLINGS = [
    "```python\nu = ｇet_user('U-1')\nemit_result(u.data)\n```",
    "```\nu = get_ｕser('U-1')\nemit_result(u.data)\n```",
    "f = get_user\nemit_result(f('U-1').data)",
    "emit_result([get_user][0]('U-1').data)",
    "emit_result({'f': get_user}['f']('U-1').data)",
    "emit_result(globals()['get_user']('U-1').data)",
    "emit_result((lambda: get_user)()('U-1').data)",
    "emit_result((lambda g=get_user: g('U-1'))().data)",
    "@get_user\ndef f():\n    pass\nemit_result(1)",
    "emit_result([r.data for r in map(get_user, ['U-1'])])",
    "emit_result([g('U-1').data for g in [get_user]])",
    "emit_result(getattr(get_orders, 'get_user'))",
    "emit_result(get_user.__call__('U-1').data)",
    "emit_result(getattr(x, 'get_user')('U-1').data)",
    "import builtins as re\nexec(re.compile('get_user(\"U-1\")', 's', 'exec'))",
    "get_orders = get_user\nemit_result(get_orders('U-1').data)",
    "import __main__\nemit_result(__main__.get_user('U-1').data)",
    "emit_result((lambda: 0).__globals__['get_' + 'user']('U-1').data)",
    "try:\n    1 / 0\nexcept Exception as e:\n"
    "    emit_result(e.__traceback__.tb_frame.f_globals['get_' + 'user']('U-1').data)",
]


def _listed(state: dict) -> dict[str, dict]:
    return {t["name"]: t for t in state["tools_called"]}


def test_the_table_has_at_least_thirty_bash_spellings() -> None:
    assert len(set(BASH_SPELLINGS)) >= 30


@pytest.mark.parametrize("body", BASH_SPELLINGS)
def test_a_bash_spelling_of_a_reviewed_tool_waits_for_a_person(api, auto, body) -> None:
    state = submit(api, auto, body=body, language="bash").json()
    # Either a person decides or the validator refuses it (code built at run time may hide a
    # limit hit from the run: `jazzmine.bash.blindspots`); never the policy alone.
    assert state["status"] in {"pending", "rejected_by_validator"}, state
    listed = _listed(state)
    assert "get_user" in listed or any(t["certain"] is False for t in listed.values()), listed
    assert all(t["why"] for t in listed.values())
    assert Run.objects.count() == 0


@pytest.mark.parametrize("body", PYTHON_SPELLINGS)
def test_a_python_spelling_of_a_reviewed_tool_never_runs_unreviewed(api, auto, body) -> None:
    state = submit(api, auto, body=body).json()
    # Either the validator refuses it or a person decides; never the policy alone.
    assert state["status"] in {"pending", "rejected_by_validator"}, state
    listed = _listed(state)
    assert "get_user" in listed and listed["get_user"]["always_allow"] is False, listed
    assert Run.objects.count() == 0


def test_a_fenced_look_alike_call_is_refused_and_read_as_the_real_tool(api, auto) -> None:
    # Python runs `ｇet_user` as get_user (NFKC), which a page draws as another name.
    state = submit(api, auto, body=PYTHON_SPELLINGS[0]).json()
    assert state["status"] == "rejected_by_validator"
    assert any("U+FF47" in v and "reads it as 'get_user'" in v for v in state["violations"])
    assert _listed(state)["get_user"]["certain"] is True


def test_a_plain_bash_call_of_an_always_allowed_tool_still_runs_at_once(api, auto) -> None:
    body = "get_orders --status delivered | jq '[.orders[].price] | add'\n"
    state = submit(api, auto, body=body, language="bash").json()
    assert state["status"] == "auto_approved"
    assert [(t["name"], t["certain"]) for t in state["tools_called"]] == [("get_orders", True)]


def test_a_plain_python_call_of_an_always_allowed_tool_still_runs_at_once(api, auto) -> None:
    body = "```python\norders = get_orders(status='delivered')\nemit_result(orders.data)\n```"
    state = submit(api, auto, body=body).json()
    assert state["status"] == "auto_approved"
    # Numbered like the validator's messages: by line of the script that runs.
    assert _listed(state)["get_orders"]["why"] == "called on line 1"


def test_the_reviewer_page_shows_which_tools_and_why(api, auto, reviewer_client) -> None:
    state = submit(api, auto, body='eval "$CMD"\n', language="bash").json()
    page = reviewer_client.get(f"/reviews/{state['id']}/").content.decode()
    assert 'data-tool="get_user"' in page and 'data-certain="no"' in page
    assert "eval runs a string as commands" in page


def test_a_python_script_with_a_pattern_and_getattr_still_runs_at_once(api, auto) -> None:
    # Both read as doubts on every tool before (the reading took `.compile` for the builtin
    # and getattr for a lookup of anything): such a script waited for a person.
    body = (
        "digits = re.compile(r'\\d+')\n"
        "orders = get_orders(status='delivered')\n"
        "emit_result([digits.findall(str(getattr(o, 'id', o))) for o in orders.data])\n"
    )
    state = submit(api, auto, body=body).json()
    assert state["status"] == "auto_approved", state
    assert [(t["name"], t["certain"]) for t in state["tools_called"]] == [("get_orders", True)]
