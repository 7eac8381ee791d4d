# Technique: Capturing eval in a lambda default so the call looks innocent.
run = lambda s, f=eval: f(s)
emit_result(run("1"))
