# Technique: Passing getattr as a value to map() to feed it computed names.
emit_result(list(map(getattr, [len], ["__" + "self__"])))
