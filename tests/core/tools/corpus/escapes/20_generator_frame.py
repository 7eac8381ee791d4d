# Technique: Generator frame walk: (x for x in []).gi_frame.f_back.f_globals.
g = (x for x in [1])
emit_result(g.gi_frame.f_back.f_globals)
