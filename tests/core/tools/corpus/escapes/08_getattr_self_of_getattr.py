# Technique: getattr(getattr, '__self__') returns the builtins module from a builtin function.
b = getattr(getattr, "__self__")
emit_result(b)
