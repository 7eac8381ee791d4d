# Technique: Lambda parameter shadowing an emit helper.
f = lambda emit_log: emit_log
emit_result(f(1))
