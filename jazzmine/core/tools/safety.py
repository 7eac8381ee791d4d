"""What an LLM-written script may touch: shared by the validator and the in-sandbox harness.

This module is stdlib-only and dependency-free on purpose: the sandbox builder copies it into
every image so that the static wall (the validator) and the runtime wall (the harness's
restricted builtins) are built from the same list and cannot drift apart.
"""

from __future__ import annotations

import string

# The seed's safe list minus what only serves introspection escapes: `vars` hands out
# `__dict__`, `dir` enumerates dunder names. `type` stays for `type(x).__name__`-free checks
# like `type(x) is dict`; the validator refuses its three-argument (class-creating) form.
SAFE_BUILTINS: frozenset[str] = frozenset(
    {
        # Collections
        "list", "dict", "set", "tuple", "len", "range", "enumerate", "zip", "map", "filter",
        "sorted", "reversed",
        # Types
        "str", "int", "float", "bool", "type", "isinstance", "hasattr", "getattr",
        # Math
        "min", "max", "sum", "abs", "round",
        # Logic / debug
        "any", "all", "print", "repr", "format",
        # Iteration and small conversions LLM-written scripts reach for constantly
        # (`next((o for o in orders if ...), None)`, `divmod`, `chr`/`ord`); none of them
        # hands out an object the script could not already build.
        "next", "iter", "frozenset", "divmod", "pow", "chr", "ord", "hex", "bin", "oct",
        "callable",
        # Plain value types with no reach beyond their own data: `bytes` for encode/decode
        # round trips, `slice` for computed slicing.
        "bytes", "slice",
    }
)  # fmt: skip

# Exception classes a script may name in `except` clauses and `raise`. Harmless to construct,
# and scripts that cannot catch `KeyError` write worse code.
SAFE_EXCEPTIONS: frozenset[str] = frozenset(
    {
        "Exception", "ArithmeticError", "AssertionError", "AttributeError", "IndexError",
        "KeyError", "LookupError", "RuntimeError", "StopIteration", "TimeoutError", "TypeError",
        "ValueError", "ZeroDivisionError", "NotImplementedError", "OverflowError",
        # Standard classes scripts name in `except` clauses; none carries more than its args.
        "NameError", "UnboundLocalError", "RecursionError", "FloatingPointError",
        "SyntaxError", "IndentationError", "UnicodeError", "UnicodeDecodeError",
        "UnicodeEncodeError", "EOFError", "OSError", "ConnectionError", "FileNotFoundError",
        "PermissionError", "BufferError", "StopAsyncIteration", "MemoryError",
    }
)  # fmt: skip

# Constants that are names in the AST but never callable escapes.
SAFE_CONSTANTS: frozenset[str] = frozenset({"None", "True", "False", "NotImplemented", "Ellipsis"})

EMIT_HELPERS: tuple[str, ...] = ("emit_intermediate", "emit_log", "emit_result")

# Types a tool call hands back; scripts may build and inspect them.
FRAMEWORK_NAMES: frozenset[str] = frozenset({"ToolResponse"})

# Modules the harness pre-imports, with the public attributes a script may use. Explicit lists
# (not `dir()`) so the validator's answer never depends on the Python version that runs it.
PREIMPORTED_MODULES: dict[str, frozenset[str]] = {
    "json": frozenset({"dumps", "loads", "JSONDecodeError"}),
    "time": frozenset(
        {
            "time", "time_ns", "sleep", "monotonic", "monotonic_ns", "perf_counter",
            "perf_counter_ns", "strftime", "strptime", "gmtime", "localtime", "mktime",
        }
    ),
    "math": frozenset(
        {
            "ceil", "floor", "trunc", "fabs", "sqrt", "exp", "log", "log2", "log10", "pow",
            "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "hypot", "degrees", "radians",
            "isclose", "isfinite", "isinf", "isnan", "fsum", "prod", "gcd", "lcm", "comb",
            "perm", "factorial", "copysign", "fmod", "modf", "pi", "e", "tau", "inf", "nan",
            "dist", "isqrt",
        }
    ),
    "re": frozenset(
        {
            "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split",
            "compile", "escape", "error", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S",
            "VERBOSE", "X", "ASCII", "A",
        }
    ),
    "datetime": frozenset({"datetime", "date", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR"}),
}  # fmt: skip

# Attributes that are not dunder-prefixed but still open frames, code objects, generator
# and coroutine internals or tracebacks: the classic second step of a sandbox escape.
FORBIDDEN_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
        "cr_frame", "cr_code", "cr_await", "cr_running", "cr_origin", "cr_suspended",
        "ag_frame", "ag_code", "ag_await", "ag_running",
        "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_lasti", "f_trace",
        "f_lineno", "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
        "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name",
        "co_firstlineno", "co_lnotab", "co_linetable", "co_freevars", "co_cellvars",
        "cell_contents", "func_globals", "func_code", "im_func", "im_self",
        "mro", "format_map", "with_traceback",
    }
)  # fmt: skip


def runtime_names() -> frozenset[str]:
    """Every builtin name the harness exposes to a script (besides tools and modules)."""
    # None/True/False are keywords, never looked up in builtins.
    return SAFE_BUILTINS | SAFE_EXCEPTIONS | (SAFE_CONSTANTS - {"None", "True", "False"})


_format_fields = string.Formatter().parse


def format_field_problem(template: str, depth: int = 0) -> str | None:
    """Return the first field of a format string that is not a bare name or number, else None.

    Shared by the validator (literal templates) and the harness (templates built at run time).
    """
    try:
        for _literal, field, spec, _conversion in _format_fields(template):
            if field is None:
                continue
            if field and not (field.isdigit() or field.isidentifier()):
                return field
            # `{0:{1.__class__}}`: replacement fields may nest inside a format spec.
            if spec and "{" in spec:
                if depth >= 2:
                    return spec
                nested = format_field_problem(spec, depth + 1)
                if nested is not None:
                    return nested
    except ValueError:
        return template[:40]
    return None
