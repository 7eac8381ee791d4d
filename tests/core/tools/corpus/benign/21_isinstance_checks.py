# Defensive type checks on tool data.
data = get_orders().data
orders = data.get("orders") if isinstance(data, dict) else data
if not isinstance(orders, list):
    orders = []
clean = []
for order in orders:
    if type(order) is dict and hasattr(order, "get"):
        clean.append(order)
emit_result({"valid": len(clean), "invalid": len(orders) - len(clean)})
