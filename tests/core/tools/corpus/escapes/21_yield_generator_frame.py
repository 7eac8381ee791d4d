# Technique: Generator function frame: def g(): yield; g().gi_frame.
def gen():
    yield 1
emit_result(gen().gi_frame.f_builtins)
