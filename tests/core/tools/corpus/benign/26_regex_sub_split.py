# Clean free text with re.sub, re.split and flags.
products = search_products(query="USB cable").data.get("products", [])
cleaned = []
for p in products:
    text = re.sub(r"\s+", " ", p.get("description", "")).strip()
    words = re.split(r"[,;]\s*", text)
    if re.search(r"usb[- ]?c", text, re.IGNORECASE):
        cleaned.append({"name": p["name"], "parts": words})
emit_result(cleaned)
