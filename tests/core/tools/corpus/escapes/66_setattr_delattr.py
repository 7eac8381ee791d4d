# Technique: setattr/delattr to mutate shared objects.
setattr(json, "dumps", None)
delattr(json, "loads")
emit_result(1)
