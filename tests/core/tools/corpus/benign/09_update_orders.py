# Mark stale pending orders as cancelled, reporting progress.
orders = get_orders().data["orders"]
pending = [o for o in orders if o.get("status") == "pending"]
cancelled = []
for i, order in enumerate(pending):
    result = update_order(order_id=order["order_id"], status="cancelled")
    if not result.success:
        emit_log(f"could not cancel {order['order_id']}: {result.message}")
        continue
    cancelled.append(order["order_id"])
    emit_intermediate({"done": i + 1, "of": len(pending)})
emit_result({"cancelled": cancelled})
