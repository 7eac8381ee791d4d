# Technique: Introspection builtins: globals(), vars(), dir(), locals().
emit_result([globals(), vars(), dir(), locals()])
