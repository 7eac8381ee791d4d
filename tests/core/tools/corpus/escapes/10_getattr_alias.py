# Technique: Aliasing getattr so the call site no longer looks like getattr.
g = getattr
emit_result(g(len, "__self__"))
