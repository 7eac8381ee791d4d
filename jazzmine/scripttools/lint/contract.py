"""Checks of the script's contract with its caller: JSON in on stdin, JSON out, errors on stderr."""

from __future__ import annotations

from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()


@CHECKS.register(
    "stdin_contract",
    "the script reads its arguments as JSON from stdin",
    needs_manifest=False,
    needs_script=True,
)
def stdin_contract(subject: Subject) -> Outcome:
    """Pass when the script parses JSON read from stdin."""
    if not subject.scan.reads_stdin:
        example = (
            'json.loads(sys.stdin.read() or "{}")'
            if subject.scan.runtime == "python3"
            else "JSON.parse(fs.readFileSync(0, 'utf-8') || '{}')"
        )
        return False, f"no JSON read from stdin found; start with {example}"
    return True, "ok"


@CHECKS.register(
    "stdout_contract",
    "the script prints one JSON object on stdout and nothing else",
    needs_manifest=False,
    needs_script=True,
)
def stdout_contract(subject: Subject) -> Outcome:
    """Pass when the script prints JSON on stdout and nothing else there."""
    scan = subject.scan
    if scan.debug_outputs:
        lines = ", ".join(str(n) for n in scan.debug_outputs)
        return (
            False,
            f"output on stdout that is not JSON (line {lines}): debug output goes to stderr",
        )
    if not scan.json_outputs:
        example = (
            "print(json.dumps(result))"
            if scan.runtime == "python3"
            else ("process.stdout.write(JSON.stringify(result))")
        )
        return False, f"no JSON printed on stdout; end with {example}"
    return True, "ok"


@CHECKS.register(
    "stderr_contract",
    "errors go to stderr with a non-zero exit",
    needs_manifest=False,
    needs_script=True,
)
def stderr_contract(subject: Subject) -> Outcome:
    """Pass when the script writes errors to stderr and exits non-zero somewhere."""
    missing = []
    if not subject.scan.stderr_writes:
        missing.append("no error message written to stderr")
    if not subject.scan.error_exits:
        missing.append("no non-zero exit (sys.exit(1) / process.exit(1))")
    return (not missing, "; ".join(missing) or "ok")


@CHECKS.register(
    "required_guarded", "the script checks every required parameter", needs_script=True
)
def required_guarded(subject: Subject) -> Outcome:
    """Pass when the script checks for each required parameter before using it."""
    unguarded = [
        r for r in subject.required if r in subject.props and r not in subject.scan.guarded
    ]
    if unguarded:
        return False, (
            f"no missing-value check for required {', '.join(unguarded)}: print to stderr and "
            "exit 1 when it is absent"
        )
    return True, "ok"
