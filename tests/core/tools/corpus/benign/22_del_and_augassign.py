# Build a dict, delete temporary keys and variables, augmented assignments.
orders = get_orders().data["orders"]
totals = {}
for order in orders:
    key = order.get("status", "unknown")
    totals[key] = totals.get(key, 0)
    totals[key] += order["price"]
scratch = dict(totals)
count = 0
count += len(totals)
count *= 2
del count
if "unknown" in totals:
    del totals["unknown"]
emit_result(totals)
