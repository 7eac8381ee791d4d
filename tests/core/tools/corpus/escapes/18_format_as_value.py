# Technique: Bound .format passed around as a callable.
f = "{0.__class__}".format
emit_result(f(1))
