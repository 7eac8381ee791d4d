# Page through search results until a page comes back empty.
page = 1
collected = []
while True:
    response = search_products(query="lamp", page=page)
    items = response.data.get("products", [])
    if not items:
        break
    collected.extend(items)
    emit_intermediate({"page": page, "so_far": len(collected)})
    page += 1
    if page > 20:
        emit_log("stopping after 20 pages")
        break
else:
    emit_log("loop ended without break")
emit_result({"products": len(collected)})
