# Technique: Aliasing type to call its three-argument form.
make = type
emit_result(make("X", (), {}))
