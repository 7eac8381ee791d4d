"""Tools defined in a real file, as the seeds define them, for the seed-example tests."""

from __future__ import annotations

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolResponse, registry, tool

registry.register_sandbox(
    SandboxConfig(name="analytics", dependencies=["numpy"], secrets=["DB_URL"])
)
registry.register_sandbox(SandboxConfig(name="ecommerce"))


@tool(
    description="Analyze user behavior data.",
    parameters=[ToolParameter("user_id", "str", "Unique user identifier", required=True)],
    dependencies=["pandas"],  # Tool-specific dep
    secrets=["ANALYTICS_TOKEN"],  # Tool-specific secret
    sandbox="analytics",
)
async def analyze_behavior(user_id: str) -> ToolResponse:
    import os

    token = os.environ.get("ANALYTICS_TOKEN")
    return ToolResponse(success=True, data={"score": 0.85, "authenticated": bool(token)})


@tool(description="List the shop's recent orders.", sandbox="ecommerce")
def get_orders() -> ToolResponse:
    orders = [{"id": "ORD-1", "price": 10.5}, {"id": "ORD-2", "price": 4.5}]
    return ToolResponse(success=True, data={"orders": orders})
