# Cheap products matching a query, cheapest first.
response = search_products(query="wireless headphones")
products = response.data.get("products", [])
cheap = [p for p in products if p.get("price", 0) < 100]
cheap.sort(key=lambda p: p["price"])
emit_log(f"found {len(products)} products, {len(cheap)} under 100")
emit_result([{"name": p["name"], "price": p["price"]} for p in cheap])
