"""Tools the sandbox tests teleport into their image (real functions in a real file)."""

from __future__ import annotations

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse

TEST_SANDBOX = "sandbox-tests"


def add(a: int, b: int) -> ToolResponse:
    return ToolResponse(success=True, data=a + b)


async def slow_double(x: int) -> ToolResponse:
    import asyncio

    await asyncio.sleep(0.01)
    return ToolResponse(success=True, data=x * 2)


def explode(reason: str) -> ToolResponse:
    raise RuntimeError(reason)


def read_env(name: str) -> ToolResponse:
    import os

    return ToolResponse(success=True, data=os.environ.get(name))


def make_registry(sandbox: str = TEST_SANDBOX, **config: object) -> ToolRegistry:
    """Return a fresh registry with the test sandbox and its four tools."""
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=sandbox, secrets=["API_KEY"], **config))
    number = [ToolParameter("a", "int"), ToolParameter("b", "int")]
    registry.register_function(add, description="Add two numbers.", parameters=number,
                               dependencies=[], secrets=[], sandbox=sandbox)  # fmt: skip
    registry.register_function(slow_double, description="Double a number, slowly.",
                               parameters=[ToolParameter("x", "int")], dependencies=[],
                               secrets=[], sandbox=sandbox)  # fmt: skip
    registry.register_function(explode, description="Always fails.",
                               parameters=[ToolParameter("reason", "str")], dependencies=[],
                               secrets=[], sandbox=sandbox)  # fmt: skip
    registry.register_function(read_env, description="Read an environment variable.",
                               parameters=[ToolParameter("name", "str")], dependencies=[],
                               secrets=["TOOL_TOKEN"], sandbox=sandbox)  # fmt: skip
    return registry
