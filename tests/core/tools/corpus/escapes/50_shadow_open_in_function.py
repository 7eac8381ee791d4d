# Technique: Binding a builtin name in one scope so a load elsewhere falls through to the real builtin.
def setup():
    open = None
    return open
emit_result(open("/etc/passwd"))
