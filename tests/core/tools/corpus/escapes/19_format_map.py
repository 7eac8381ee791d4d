# Technique: str.format_map with a mapping reaches attributes the same way.
emit_result("{x.__class__}".format_map({"x": 1}))
