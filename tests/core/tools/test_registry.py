from __future__ import annotations

import uuid
import warnings

import pytest

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, registry
from jazzmine.sandbox.request import RunLimits

from . import sample_tools


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    r.register_sandbox(
        SandboxConfig(name="shop", dependencies=["requests", "attrs"], secrets=["SHOP_KEY"])
    )
    return r


def add_user_tool(reg: ToolRegistry, **overrides):
    kwargs = dict(description="Fetch a user.", parameters=[sample_tools.USER_PARAM], sandbox="shop")
    kwargs.update(overrides)
    reg.tool(**kwargs)(sample_tools.get_user)
    return reg.get_tool(kwargs["sandbox"], "get_user")


def test_a_fresh_registry_has_a_default_sandbox() -> None:
    assert [s.name for s in ToolRegistry().sandboxes()] == ["default"]
    assert registry.get_sandbox("default").name == "default"


def test_a_sandbox_s_default_limits_are_a_run_s_default_limits() -> None:
    # The two defaults are written twice on purpose: the registry does not import the sandbox
    # package (it would load the Docker client with it). This keeps them the same.
    assert RunLimits.from_sandbox(SandboxConfig(name="plain")) == RunLimits()


def test_source_is_extracted_dedented_without_decorators(reg: ToolRegistry) -> None:
    reg.tool(description="Method-level tool", sandbox="shop", name="method_tool")(
        sample_tools.Holder.method_tool
    )
    source = reg.get_tool("shop", "method_tool").source
    assert source.startswith("def method_tool(self, q: str) -> ToolResponse:\n")
    assert "@" not in source


def test_editing_a_description_does_not_change_the_checksum(reg: ToolRegistry) -> None:
    first = add_user_tool(reg).checksum
    other = ToolRegistry()
    other.register_sandbox(SandboxConfig(name="shop"))
    add_user_tool(other, description="A completely different description.")
    assert other.get_tool("shop", "get_user").checksum == first
    assert len(first) == 16 and int(first, 16) >= 0


def test_tool_dependencies_change_the_checksum(reg: ToolRegistry) -> None:
    add_user_tool(reg)
    other = ToolRegistry()
    other.register_sandbox(SandboxConfig(name="shop"))
    add_user_tool(other, dependencies=["httpx"])
    assert other.get_tool("shop", "get_user").checksum != reg.get_tool("shop", "get_user").checksum


def test_a_function_made_with_exec_is_refused() -> None:
    namespace: dict = {}
    exec("def from_exec(x):\n    return x\n", namespace)
    with pytest.raises(ValueError, match=r"must be defined in a \.py file"):
        ToolRegistry().tool(description="d")(namespace["from_exec"])


def test_a_tool_without_a_tool_response_hint_warns(reg: ToolRegistry) -> None:
    with pytest.warns(UserWarning, match="no '-> ToolResponse' return hint"):
        reg.tool(description="d", sandbox="shop")(sample_tools.no_hint)


def test_a_tool_with_a_tool_response_hint_does_not_warn(reg: ToolRegistry) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add_user_tool(reg)


def test_an_unknown_sandbox_names_the_registered_ones(reg: ToolRegistry) -> None:
    with pytest.raises(
        ValueError, match="Unknown sandbox 'nope'; registered sandboxes: default, shop"
    ):
        add_user_tool(reg, sandbox="nope")


def test_a_duplicate_tool_name_in_one_sandbox_is_refused(reg: ToolRegistry) -> None:
    add_user_tool(reg)
    with pytest.raises(ValueError, match="already has a tool named 'get_user'"):
        reg.tool(description="d", sandbox="shop", name="get_user")(sample_tools.fetch_rates)


def test_the_same_name_in_another_sandbox_is_fine(reg: ToolRegistry) -> None:
    add_user_tool(reg)
    add_user_tool(reg, sandbox="default")
    assert [t.sandbox_name for t in reg.tools()] == ["default", "shop"]


def test_documented_parameters_must_exist_on_the_function(reg: ToolRegistry) -> None:
    with pytest.raises(ValueError, match=r"documents parameters \['userid'\]"):
        add_user_tool(reg, parameters=[ToolParameter("userid", "str")])


def test_async_tools_are_recognised(reg: ToolRegistry) -> None:
    reg.tool(description="Rates", sandbox="shop")(sample_tools.fetch_rates)
    assert reg.get_tool("shop", "fetch_rates").is_async
    assert not add_user_tool(reg).is_async


def test_dependencies_are_deduplicated_and_stably_sorted(reg: ToolRegistry) -> None:
    add_user_tool(
        reg, dependencies=["requests", "Pandas", "attrs"], secrets=["USER_API", "SHOP_KEY"]
    )
    assert reg.aggregate_dependencies("shop") == ["attrs", "Pandas", "requests"]
    assert reg.aggregate_secrets("shop") == ["SHOP_KEY", "USER_API"]


def test_the_sandbox_checksum_changes_with_code_or_dependencies_and_only_then(
    reg: ToolRegistry,
) -> None:
    add_user_tool(reg)
    base = reg.sandbox_checksum("shop")
    reg.register_sandbox(
        SandboxConfig(
            name="shop", dependencies=["requests", "attrs"], secrets=["OTHER"], memory_mb=512
        )
    )
    assert reg.sandbox_checksum("shop") == base, "secrets and limits are not baked into the image"
    reg.register_sandbox(SandboxConfig(name="shop", dependencies=["requests", "attrs", "six"]))
    with_dep = reg.sandbox_checksum("shop")
    assert with_dep != base
    reg.unregister("shop", "get_user")
    reg.register_source(
        "def get_user(user_id):\n    return ToolResponse(success=True, data={'v': 2})\n",
        sandbox="shop",
        description="Fetch a user.",
    )
    assert reg.sandbox_checksum("shop") not in (base, with_dep)


def test_the_tools_prompt_is_cached_and_invalidated_when_tools_change(reg: ToolRegistry) -> None:
    add_user_tool(reg)
    first = reg.build_tools_prompt("shop")
    assert reg.build_tools_prompt("shop") is first
    everything = reg.build_tools_prompt()
    reg.tool(description="Rates", sandbox="shop")(sample_tools.fetch_rates)
    second = reg.build_tools_prompt("shop")
    assert second is not first and "fetch_rates" in second
    assert "fetch_rates" in reg.build_tools_prompt() and "fetch_rates" not in everything


def test_tool_ids_are_uuid5_of_the_name_and_stable(reg: ToolRegistry) -> None:
    registered = add_user_tool(reg)
    other = ToolRegistry()
    other.register_sandbox(SandboxConfig(name="shop"))
    add_user_tool(other)
    assert registered.id == other.get_tool("shop", "get_user").id
    assert registered.id.version == 5 and isinstance(registered.id, uuid.UUID)


def test_register_source_reads_a_tool_without_running_it(reg: ToolRegistry) -> None:
    source = (
        "@tool(description='x')\n"
        "async def lookup(sku: str) -> ToolResponse:\n"
        "    raise SystemExit('never runs')\n"
    )
    registered = reg.register_source(source, sandbox="shop", description="Look up a SKU.")
    assert registered.fn is None and registered.is_async
    assert registered.function_name == "lookup" and registered.name == "lookup"
    assert registered.source.startswith("async def lookup")


def test_register_source_reports_syntax_errors_with_their_line(reg: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="invalid Python syntax at line 2"):
        reg.register_source("def f():\n    return (\n", sandbox="shop", description="d")


def test_sandbox_names_and_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="lowercase"):
        SandboxConfig(name="Bad Name")
    with pytest.raises(ValueError, match="memory_mb must be positive"):
        SandboxConfig(name="ok", memory_mb=0)
    with pytest.raises(ValueError, match="backend"):
        SandboxConfig(name="ok", backend="chroot")


def test_a_frozen_registry_refuses_every_change(reg: ToolRegistry) -> None:
    reg.register_source("def a() -> None:\n    pass\n", sandbox="default", description="a")
    prompt, sandboxes = reg.build_tools_prompt(), reg.sandboxes()
    assert reg.freeze() is reg and reg.frozen

    def b() -> None:
        pass

    changes = [
        lambda: reg.register_sandbox(SandboxConfig(name="other")),
        lambda: reg.register_source(
            "def c() -> None:\n    pass\n", sandbox="default", description="c"
        ),
        lambda: reg.register_function(
            b, description="b", parameters=[], dependencies=[], secrets=[]
        ),
        lambda: reg.tool("b")(b),
        lambda: reg.unregister("default", "a"),
    ]
    for change in changes:
        with pytest.raises(RuntimeError, match="read-only"):
            change()
    assert reg.build_tools_prompt() == prompt
    assert reg.sandboxes() == sandboxes
