# Serialise a summary with json.dumps and parse a JSON field.
orders = get_orders().data["orders"]
summary = {"count": len(orders), "ids": [o["order_id"] for o in orders]}
text = json.dumps(summary, sort_keys=True)
meta = []
for order in orders:
    raw = order.get("metadata", "{}")
    try:
        meta.append(json.loads(raw))
    except json.JSONDecodeError:
        meta.append({})
emit_result({"summary": text, "metadata": meta})
