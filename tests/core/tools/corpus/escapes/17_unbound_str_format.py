# Technique: Unbound str.format descriptor sidesteps bound-method guards (jinja #2205).
emit_result(str.format("{0.__class__}", 1))
