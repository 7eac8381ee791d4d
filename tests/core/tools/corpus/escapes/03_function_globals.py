# Technique: A helper function's __globals__ hands out the module namespace and __builtins__.
def helper():
    return 1
emit_result(helper.__globals__["__builtins__"])
