"""Reading a script body without Django, so that a big one can be read in the checker process.

Every reading of untrusted code on its way to a run parses it: assembling a Python body (is
it a program, or prose around a fence?), validating the script, and the review gate's reading
of which tools it calls. These functions do exactly what the runs' services did in the web
process, with plain arguments the checker process can take (`studio.checker.checked`): the
sandbox's tool names instead of its registry, a language as text.
"""

from __future__ import annotations

from typing import Any

from jazzmine.bash.generator import BashScriptGenerator
from jazzmine.core.tools import ScriptGenerator
from jazzmine.gate import Reading, read_calls

from ..studio import checker

checker.preload(__name__)


class ToolNames:
    """The one thing assembling and validating a Python script asks of a registry: its tools.

    A `ScriptGenerator` over it assembles and validates as one over the sandbox's registry
    does (`preamble` and `validate` read `tool_names` only), and it pickles.
    """

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)

    def tool_names(self, sandbox_name: str) -> list[str]:
        """Return the names of the sandbox's tools, as its registry listed them."""
        return list(self.names)


def python_generator(tool_names: list[str]) -> ScriptGenerator:
    """Return a generator that assembles and validates as the sandbox's own does."""
    return ScriptGenerator(ToolNames(tool_names))  # type: ignore[arg-type]


def python_script(body: str, sandbox_name: str, tool_names: list[str]) -> tuple[str, list[str]]:
    """Return the script a Python body assembles to and its violations (by script line)."""
    generator = python_generator(tool_names)
    script = generator.assemble_script(body, sandbox_name)
    return script, generator.validate(script, sandbox_name)


def script_read(script: str, language: str, tools: list[str]) -> Reading:
    """Return which of `tools` a script calls or may call (`jazzmine.gate.read_calls`)."""
    return read_calls(script, language=language, tools=tools)


def answer_reader(generator: Any, sandbox_name: str) -> Any:
    """Return a copy of a loop's generator that reads answers exactly as it does, and pickles.

    An answer is read by `answer_body`, `assemble_script` and `validate`: for Python they need
    the sandbox's tool names, for bash its tools (the commands a script may call) and the
    longest script allowed.
    """
    if isinstance(generator, ScriptGenerator):
        return python_generator(generator.registry.tool_names(sandbox_name))
    if isinstance(generator, BashScriptGenerator):
        return BashScriptGenerator(generator.specs, max_chars=generator.max_chars)
    raise TypeError(f"no reader for a {type(generator).__name__}")


def reader_call(reader: Any, method: str, *args: Any) -> Any:
    """Call one of a reader's methods (in the checker process, for a big text)."""
    return getattr(reader, method)(*args)
