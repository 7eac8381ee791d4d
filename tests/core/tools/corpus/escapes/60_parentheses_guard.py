# Technique: Tool used as a value without calling it (seed's parentheses guard).
users = get_user
emit_result(users)
