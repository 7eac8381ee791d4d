# Technique: __builtins__ lookup to reach eval.
emit_result(__builtins__["eval"]("1+1"))
