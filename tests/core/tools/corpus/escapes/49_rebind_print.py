# Technique: Rebinding a builtin name.
print = emit_log
emit_result(1)
