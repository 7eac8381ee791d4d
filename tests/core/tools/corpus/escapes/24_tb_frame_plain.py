# Technique: Non-dunder frame attributes after getting a traceback some other way.
try:
    [][1]
except IndexError as e:
    tb = e.args
    emit_result(tb.tb_frame.f_locals)
