# Orders placed in the last seven days.
now = datetime.datetime.now(datetime.timezone.utc)
cutoff = now - datetime.timedelta(days=7)
recent = []
for order in get_orders().data["orders"]:
    placed = datetime.datetime.fromisoformat(order["created_at"])
    if placed.tzinfo is None:
        placed = placed.replace(tzinfo=datetime.timezone.utc)
    if placed >= cutoff:
        recent.append(order["order_id"])
emit_result({"since": cutoff.isoformat(), "recent": recent, "days": (now - cutoff).days})
