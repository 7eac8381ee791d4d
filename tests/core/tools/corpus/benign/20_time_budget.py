# Stop querying when a time budget runs out.
started = time.monotonic()
queries = ["desk", "chair", "lamp", "monitor"]
results = {}
for q in queries:
    if time.monotonic() - started > 20:
        emit_log("time budget exhausted")
        break
    results[q] = len(search_products(query=q).data.get("products", []))
emit_result({"counts": results, "elapsed_s": round(time.monotonic() - started, 3)})
