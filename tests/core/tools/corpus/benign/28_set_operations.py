# Set algebra between buyers and searched products.
orders = get_orders().data["orders"]
bought = {o["item"] for o in orders}
listed = {p["name"] for p in search_products(query="").data.get("products", [])}
emit_result(
    {
        "never_bought": sorted(listed - bought),
        "both": sorted(bought & listed),
        "discontinued": sorted(bought.difference(listed)),
        "frozen": len(frozenset(bought)),
    }
)
