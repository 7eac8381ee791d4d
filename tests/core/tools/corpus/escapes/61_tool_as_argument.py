# Technique: Tool passed as a callback instead of being called.
emit_result(list(map(get_user, [1, 2])))
