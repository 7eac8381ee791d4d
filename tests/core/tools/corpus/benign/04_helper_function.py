# Helper function with a default argument and a KeyError fallback.
def price_of(order, default=0.0):
    try:
        return float(order["price"])
    except KeyError:
        return default
    except (TypeError, ValueError) as exc:
        emit_log(f"bad price in order {order.get('order_id')}: {exc}")
        return default


orders = get_orders().data["orders"]
prices = [price_of(o) for o in orders]
emit_result({"max": max(prices, default=0), "min": min(prices, default=0)})
