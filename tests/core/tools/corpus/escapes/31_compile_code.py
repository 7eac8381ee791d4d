# Technique: compile() to build code objects.
code = compile("1", "<x>", "eval")
emit_result(code)
