# Technique: Comprehension target named like a builtin.
emit_result([len for len in range(3)])
