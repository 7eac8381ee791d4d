# Chained comparisons, boolean logic, getattr with a literal name.
orders = get_orders().data["orders"]
mid = [o for o in orders if 10 <= o["price"] < 100 and not o.get("refunded")]
first = mid[0] if mid else None
status = getattr(first, "status", None) if first is not None else None
emit_result({"mid_range": len(mid), "status": status, "symbol": chr(8364), "code": ord("A")})
