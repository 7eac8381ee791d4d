# Technique: except ... as json rebinds a pre-imported module.
try:
    1 / 0
except ZeroDivisionError as json:
    pass
emit_result(1)
