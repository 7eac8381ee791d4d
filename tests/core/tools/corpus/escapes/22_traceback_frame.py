# Technique: Exception traceback to frame to globals: e.__traceback__.tb_frame.f_back.f_globals.
try:
    1 / 0
except ZeroDivisionError as e:
    emit_result(e.__traceback__.tb_frame.f_back.f_globals)
