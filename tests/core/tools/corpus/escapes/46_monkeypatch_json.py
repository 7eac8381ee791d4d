# Technique: Tampering with shared harness state: json.dumps = lambda ... (DESIGN.md: hangs a reused harness).
json.dumps = lambda *a, **k: "x"
emit_result({"a": 1})
