# Top five customers by spend, with names looked up per user.
orders = get_orders().data["orders"]
spend = {}
for order in orders:
    uid = order["user_id"]
    spend[uid] = spend.get(uid, 0) + order["price"]

ranked = sorted(spend.items(), key=lambda kv: kv[1], reverse=True)[:5]
top = []
for index, (uid, amount) in enumerate(ranked, start=1):
    emit_intermediate({"progress": f"{index}/{len(ranked)}"})
    user = get_user(user_id=uid).data
    top.append({"name": user.get("name", "unknown"), "spend": round(amount, 2)})
emit_result(top)
