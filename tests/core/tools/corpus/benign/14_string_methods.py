# Normalise product names with string methods.
products = search_products(query="chair").data.get("products", [])
names = [p["name"].strip().title() for p in products if p.get("name")]
slugs = ["-".join(n.lower().split()) for n in names]
joined = ", ".join(names[:10])
starts = [n for n in names if n.startswith(("Office", "Gaming"))]
emit_result({"names": names, "slugs": slugs, "preview": joined, "starts": starts})
