# map/filter with builtins, any/all and next with a default.
orders = get_orders().data["orders"]
prices = list(map(float, (o["price"] for o in orders)))
positive = list(filter(lambda p: p > 0, prices))
first_big = next((o for o in orders if o["price"] > 1000), None)
names = sorted(map(str.lower, (o.get("item", "") for o in orders)))
emit_result(
    {
        "all_positive": all(p > 0 for p in prices),
        "any_free": any(p == 0 for p in prices),
        "positive": len(positive),
        "first_big": first_big["order_id"] if first_big else None,
        "items": names,
    }
)
