# Technique: Framework function objects carry the harness globals (emit_result.__globals__).
emit_result(emit_result.__globals__)
