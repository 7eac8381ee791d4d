# Count orders per status with a dict comprehension.
orders = get_orders().data["orders"]
statuses = {o.get("status", "unknown") for o in orders}
counts = {s: sum(1 for o in orders if o.get("status") == s) for s in sorted(statuses)}
emit_result(counts)
