# Technique: Deleting a framework name.
del emit_log
emit_result(1)
