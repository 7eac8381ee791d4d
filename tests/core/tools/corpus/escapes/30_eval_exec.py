# Technique: Direct eval/exec of a string.
exec("x = 1")
emit_result(eval("2 + 2"))
