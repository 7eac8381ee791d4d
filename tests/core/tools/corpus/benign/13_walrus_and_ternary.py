# Walrus in a comprehension filter and a conditional expression.
orders = get_orders().data["orders"]
big = [(o["order_id"], total) for o in orders if (total := o["price"] * o.get("quantity", 1)) > 500]
label = "many" if len(big) > 10 else "few"
emit_result({"big_orders": big, "label": label})
