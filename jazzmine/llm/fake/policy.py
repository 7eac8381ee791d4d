"""The fake model's default answer: a plausible script for the task and tools in the prompt.

Its demo of the retry loop: a task that mentions "first" gets, on attempt 1, the classic mistake
`r.data[0]` (KeyError: 0 on a dict); the retry prompt gets the fixed script. A bash prompt
(bashkit's, listing its commands and their flags) gets a bash script calling them.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import unescape

_TOOL = re.compile(r"<tool name=([\"'])(?P<name>.+?)\1>(?P<body>.*?)</tool>", re.DOTALL)
_PARAMETER = re.compile(
    r"<parameter name=([\"'])(?P<name>.+?)\1 type=([\"'])(?P<type>.+?)\3 "
    r"required=([\"'])(?P<required>.+?)\5>(?P<body>.*?)</parameter>",
    re.DOTALL,
)
# bashkit's prompt: "Commands: get_user [--user_id <string>], list_orders [--limit <integer> ...]."
_BASH_PROMPT = re.compile(r"^sandbox_tools: run bash scripts", re.MULTILINE)
_BASH_COMMANDS = re.compile(r"Commands: (?P<commands>.*?)\. Pass args", re.DOTALL)
_BASH_COMMAND = re.compile(r"(?P<name>[\w-]+)(?: \[(?P<flags>[^\]]*)\])?")
_BASH_FLAG = re.compile(r"--(?P<name>[\w-]+) <(?P<type>\w+)>")
_BASH_TASK = re.compile(r"^Task: (?P<task>.*?)\n\n", re.DOTALL | re.MULTILINE)
_RETRY = re.compile(r"Your previous script for this task failed \(attempt (\d+)\)")
_TASK = re.compile(r"^Task:\n(?P<task>.*?)(?:\n\nAvailable tools:|\n*\Z)", re.DOTALL | re.MULTILINE)
# Words in tool names that say nothing about what the tool is about.
_VERBS = {
    "get",
    "list",
    "fetch",
    "find",
    "search",
    "set",
    "create",
    "update",
    "delete",
    "read",
    "run",
}
# Verbs of tools that change things: a plausible model calls one only when the task asks for
# that change ("Show the orders" reads them; it does not update an order's status).
_CHANGES = {"set", "create", "update", "delete", "send", "cancel", "remove", "write"}


@dataclass(frozen=True)
class _Param:
    name: str
    type: str
    required: bool
    sample: str | None  # the first example, option or default, as XML text


def script_policy(messages: Sequence[Mapping[str, str]], *, fences: bool = False) -> str:
    """Write a plausible script body for the task and tools in the prompt."""
    prompt = "\n".join(m["content"] for m in messages)
    if _BASH_PROMPT.search(prompt):
        body = _bash_script(prompt)
        return f"```bash\n{body}```\n" if fences else body
    tools = {m["name"]: _params(m["body"]) for m in _TOOL.finditer(prompt)}
    match = _TASK.search(prompt)
    task = match["task"].strip() if match else ""
    is_retry = _RETRY.search(prompt) is not None
    wants_first = re.search(r"\bfirst\b", task, re.IGNORECASE) is not None

    lines: list[str] = []
    if not tools:
        lines += [
            'emit_log("No tools are available for this task.")',
            'emit_result({"task": ' + json.dumps(task) + "})",
        ]
    else:
        lines.append("results = {}")
        for index, name in enumerate(_pick_tools(task, tools)):
            args = ", ".join(f"{p.name}={_value(p, task)}" for p in tools[name] if p.required)
            lines += [
                f"r = {name}({args})",
                "if r.success:",
                f"    emit_intermediate({json.dumps(name)}, r.data)",
                f"    results[{json.dumps(name)}] = r.data",
            ]
            if wants_first and index == 0:
                if is_retry:
                    # The fix the KeyError hint asks for: find the list inside the dict.
                    lines += [
                        "    first = None",
                        "    for value in (r.data or {}).values():",
                        "        if isinstance(value, list) and value:",
                        "            first = value[0]",
                        "            break",
                        '    results["first"] = first if first is not None else r.data',
                    ]
                else:
                    # The classic first-attempt mistake: treating the data dict as a list.
                    lines.append('    results["first"] = r.data[0]')
            lines += [
                "else:",
                f'    emit_log("{name} failed: " + str(r.message))',
                f'    results[{json.dumps(name)}] = {{"error": r.message}}',
            ]
        lines.append("emit_result(results)")
    body = "\n".join(lines) + "\n"
    return f"```python\n{body}```\n" if fences else body


def _bash_script(prompt: str) -> str:
    """Write a bash script that calls the commands the task names, every flag filled in."""
    match = _BASH_TASK.search(prompt)
    task = match["task"].strip() if match else ""
    listed = _BASH_COMMANDS.search(prompt)
    tools = {
        m["name"]: [
            _Param(name=f["name"], type=f["type"], required=True, sample=None)
            for f in _BASH_FLAG.finditer(m["flags"] or "")
        ]
        for m in _BASH_COMMAND.finditer(listed["commands"] if listed else "")
    }
    if not tools:
        return f"echo {shlex.quote('No tools are available for: ' + task)}\n"
    lines = []
    for name in _pick_tools(task, tools):
        # A switch (`--dry_run`) takes no value, and a plausible model sets none unasked.
        values = [p for p in tools[name] if not p.type.startswith("bool")]
        flags = " ".join(f"--{p.name} {_shell_value(p, task)}" for p in values)
        lines.append(f"{name} {flags}".rstrip())
    return "\n".join(lines) + "\n"


def _shell_value(param: _Param, task: str) -> str:
    """Return a flag's value as one shell word: a number in the task, else a stub of its type."""
    value = _value(param, task)
    if param.type.startswith(("str", "text")) or value.startswith('"'):
        return shlex.quote(json.loads(value))
    return shlex.quote(value)


def _params(body: str) -> list[_Param]:
    params = []
    for m in _PARAMETER.finditer(body):
        sample = re.search(
            r"<(?:example|option|default)>(.*?)</(?:example|option|default)>", m["body"], re.DOTALL
        )
        params.append(
            _Param(
                name=unescape(m["name"]),
                type=unescape(m["type"]).lower(),
                required=m["required"] == "True",
                sample=unescape(sample.group(1)) if sample else None,
            )
        )
    return params


def _pick_tools(task: str, tools: Mapping[str, list[_Param]]) -> list[str]:
    """Return the tools whose names share a noun with the task (at most 3), else the first."""
    words = {w.rstrip("s") for w in re.findall(r"[a-z]+", task.lower())}
    chosen = [
        name
        for name in tools
        if ({p.rstrip("s") for p in name.lower().split("_")} - _VERBS) & words
        and _asked_for(name, words)
    ]
    return chosen[:3] or [next(iter(tools))]


def _asked_for(name: str, words: set[str]) -> bool:
    """Tell whether the task asks for what a tool does: any read, a change only when named."""
    verb = name.lower().split("_")[0]
    return verb not in _CHANGES or verb.rstrip("s") in words


def _value(param: _Param, task: str) -> str:
    """Return a Python literal for a required argument: a sample, a number in the task, a stub."""
    number = re.search(r"\b\d+(?:\.\d+)?\b", task)
    if param.sample is not None:
        if param.type.startswith(("str", "text")):
            return json.dumps(param.sample)
        with contextlib.suppress(ValueError):
            return repr(json.loads(param.sample))
        return json.dumps(param.sample)
    if param.type.startswith("int"):
        return number.group(0).split(".")[0] if number else "1"
    if param.type.startswith(("float", "number")):
        return number.group(0) if number else "1.0"
    if param.type.startswith("bool"):
        return "True"
    if param.type.startswith(("list", "array")):
        return "[]"
    if param.type.startswith(("dict", "object")):
        return "{}"
    if number and "id" in param.name.lower():
        return json.dumps(number.group(0))
    return json.dumps(param.name.replace("_", " "))
