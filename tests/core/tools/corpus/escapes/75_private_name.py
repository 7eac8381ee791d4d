# Technique: Underscore names reach harness internals (__name__, __loader__, _private).
emit_result([__name__, __loader__, _hidden])
