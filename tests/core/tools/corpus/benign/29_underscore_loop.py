# Retry a flaky tool a few times with a throwaway loop variable.
result = None
for _ in range(3):
    response = get_orders()
    if response.success:
        result = response.data
        break
    emit_log("retrying get_orders")
    time.sleep(0.1)
quotient, remainder = divmod(len(result["orders"]) if result else 0, 10)
emit_result({"pages": quotient + (1 if remainder else 0), "ok": result is not None})
