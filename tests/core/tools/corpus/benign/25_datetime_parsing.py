# Parse dates with strptime and bucket orders by weekday.
weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
buckets = {day: 0 for day in weekdays}
for order in get_orders().data["orders"]:
    when = datetime.datetime.strptime(order["date"], "%Y-%m-%d")
    buckets[weekdays[when.weekday()]] += 1
today = datetime.date.today()
emit_result({"by_weekday": buckets, "today": today.strftime("%A")})
