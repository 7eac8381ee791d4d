# zip, enumerate, reversed and slicing.
orders = get_orders().data["orders"]
ids = [o["order_id"] for o in orders]
prices = [o["price"] for o in orders]
pairs = list(zip(ids, prices))
latest = list(reversed(pairs))[:3]
every_other = ids[::2]
numbered = {i: order_id for i, order_id in enumerate(ids, 1)}
emit_result({"latest": latest, "every_other": every_other, "numbered": numbered})
