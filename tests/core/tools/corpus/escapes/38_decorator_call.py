# Technique: Decorators call without parentheses: @exec over a function/class (pyjail no-parens tricks).
@exec
@input
def payload():
    pass
emit_result(1)
