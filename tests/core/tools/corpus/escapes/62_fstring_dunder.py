# Technique: f-string expressions are code: f'{x.__class__}' and __import__ in an f-string.
emit_result(f"{().__class__.__base__} {__import__('os')}")
