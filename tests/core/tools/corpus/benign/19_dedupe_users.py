# Look each distinct user up once and cache the answers in a dict.
cache = {}


def user_name(uid):
    if uid not in cache:
        response = get_user(user_id=uid)
        cache[uid] = response.data.get("name") if response.data else None
    return cache[uid]


orders = get_orders().data["orders"]
names = sorted({user_name(o["user_id"]) or "?" for o in orders})
emit_result({"customers": names, "lookups": len(cache)})
