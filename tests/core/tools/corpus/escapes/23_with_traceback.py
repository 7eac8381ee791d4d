# Technique: e.with_traceback exposes the traceback machinery.
try:
    1 / 0
except Exception as e:
    emit_result(e.with_traceback(None))
