# Extract email addresses from order notes with re.findall.
pattern = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
found = set()
for order in get_orders().data["orders"]:
    for address in pattern.findall(order.get("notes", "")):
        found.add(address.lower())
domains = sorted({a.split("@")[1] for a in found})
emit_result({"emails": sorted(found), "domains": domains, "pattern": pattern.pattern})
