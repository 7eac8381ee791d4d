# Technique: Walrus rebinding of a tool name.
if (get_user := print):
    pass
emit_result(1)
