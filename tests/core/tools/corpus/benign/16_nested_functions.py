# Nested helper functions with keyword-only arguments and *args.
def fmt_money(amount, *, currency="EUR"):
    return f"{amount:,.2f} {currency}"


def summarise(*orders, limit=3):
    def key(order):
        return order.get("price", 0)

    best = sorted(orders, key=key, reverse=True)[:limit]
    return [fmt_money(key(o)) for o in best]


orders = get_orders().data["orders"]
emit_result(summarise(*orders, limit=5))
