# try/except/else/finally with assert and raise.
orders = get_orders().data["orders"]
checked = 0
try:
    for order in orders:
        assert "order_id" in order, "order without id"
        if order.get("price", 0) < 0:
            raise ValueError(f"negative price in {order['order_id']}")
        checked += 1
except (AssertionError, ValueError) as err:
    emit_log(str(err))
else:
    emit_log("all orders valid")
finally:
    emit_intermediate({"checked": checked})
emit_result({"checked": checked, "total": len(orders)})
