# Technique: global statement used to rebind module-level names from a function.
def f():
    global json
    json = None
f()
emit_result(1)
