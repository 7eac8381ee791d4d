"""The demo `ecommerce` sandbox: a handful of realistic tools over a small in-memory shop.

Each tool is self-contained (data and imports inside the function) because only the function
body is teleported into the sandbox image; a tool that read a name of this module would be
refused, by the importer and by `registry.tool` alike.
"""

from __future__ import annotations

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse

# A registry of its own, so the demo never collides with tools registered elsewhere.
registry = ToolRegistry()
registry.register_sandbox(
    SandboxConfig(name="ecommerce", dependencies=[], secrets=[], timeout_seconds=20.0)
)


@registry.tool(
    description="List recent orders, newest first, optionally only those with one status.",
    parameters=[
        ToolParameter(
            "status",
            "str",
            "Only return orders with this status.",
            options=["pending", "shipped", "delivered", "cancelled"],
        ),
        ToolParameter("limit", "int", "Maximum number of orders to return.", default=20),
    ],
    sandbox="ecommerce",
)
def get_orders(status: str | None = None, limit: int = 20) -> ToolResponse:
    orders = [
        {"id": "ORD-1001", "user_id": "U-1", "status": "delivered", "price": 129.0, "items": 3},
        {"id": "ORD-1002", "user_id": "U-2", "status": "shipped", "price": 42.5, "items": 1},
        {"id": "ORD-1003", "user_id": "U-1", "status": "pending", "price": 18.99, "items": 2},
        {"id": "ORD-1004", "user_id": "U-3", "status": "cancelled", "price": 250.0, "items": 5},
        {"id": "ORD-1005", "user_id": "U-2", "status": "delivered", "price": 73.25, "items": 2},
    ]
    if status is not None:
        orders = [o for o in orders if o["status"] == status]
    return ToolResponse(success=True, data={"orders": orders[: max(0, int(limit))]})


@registry.tool(
    description="Fetch one customer's profile by their user id.",
    parameters=[
        ToolParameter(
            "user_id",
            "str",
            "The customer's id.",
            required=True,
            examples=["U-1", "U-2"],
            source="context",
            display_name="Customer",
        )
    ],
    sandbox="ecommerce",
)
def get_user(user_id: str) -> ToolResponse:
    users = {
        "U-1": {"id": "U-1", "name": "Ada Lovelace", "tier": "gold", "email": "ada@example.com"},
        "U-2": {
            "id": "U-2",
            "name": "Grace Hopper",
            "tier": "silver",
            "email": "grace@example.com",
        },
        "U-3": {"id": "U-3", "name": "Alan Turing", "tier": "bronze", "email": "alan@example.com"},
    }
    user = users.get(user_id)
    if user is None:
        return ToolResponse(
            success=False, message=f"No user with id {user_id!r}", data={"user_id": user_id}
        )
    return ToolResponse(success=True, data=user)


@registry.tool(
    description="Search the product catalog by free text; returns matching products with prices.",
    parameters=[
        ToolParameter(
            "query",
            "str",
            "Words to look for in product names.",
            required=True,
            examples=["mug", "lamp"],
        ),
        ToolParameter("max_price", "float", "Only products at or below this price."),
    ],
    sandbox="ecommerce",
)
async def search_products(query: str, max_price: float | None = None) -> ToolResponse:
    import asyncio

    await asyncio.sleep(0)  # stands in for an HTTP call to the search service
    products = [
        {"sku": "SKU-MUG-01", "name": "Enamel camping mug", "price": 12.0},
        {"sku": "SKU-LMP-02", "name": "Brass desk lamp", "price": 89.0},
        {"sku": "SKU-MUG-03", "name": "Stoneware coffee mug", "price": 18.5},
        {"sku": "SKU-BAG-04", "name": "Waxed canvas tote bag", "price": 54.0},
    ]
    words = query.lower().split()
    hits = [p for p in products if all(w in p["name"].lower() for w in words)]
    if max_price is not None:
        hits = [p for p in hits if p["price"] <= max_price]
    return ToolResponse(success=True, data={"query": query, "products": hits})


@registry.tool(
    description="Change the status of an order, e.g. to cancel it or mark it shipped.",
    parameters=[
        ToolParameter(
            "order_id", "str", "The order to change.", required=True, examples=["ORD-1003"]
        ),
        ToolParameter(
            "status",
            "str",
            "The new status.",
            required=True,
            options=["shipped", "delivered", "cancelled"],
        ),
    ],
    sandbox="ecommerce",
)
def update_order_status(order_id: str, status: str) -> ToolResponse:
    if not order_id.startswith("ORD-"):
        return ToolResponse(success=False, message=f"{order_id!r} is not an order id (ORD-...)")
    return ToolResponse(
        success=True, message="updated", data={"order_id": order_id, "status": status}
    )


@registry.tool(
    description="Email a customer a receipt for one order through the mail provider.",
    parameters=[
        ToolParameter("order_id", "str", "The order the receipt is for.", required=True),
        ToolParameter(
            "email", "str", "Where to send it.", required=True, examples=["ada@example.com"]
        ),
    ],
    secrets=["MAIL_API_TOKEN"],
    sandbox="ecommerce",
)
def send_receipt(order_id: str, email: str) -> ToolResponse:
    import os

    if not os.environ.get("MAIL_API_TOKEN"):
        return ToolResponse(success=False, message="MAIL_API_TOKEN is not set for this sandbox")
    return ToolResponse(success=True, data={"order_id": order_id, "sent_to": email, "queued": True})
