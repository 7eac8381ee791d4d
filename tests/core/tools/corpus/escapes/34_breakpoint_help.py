# Technique: Interactive escapes: breakpoint() drops into pdb, help() into pydoc.
breakpoint()
help()
emit_result(1)
