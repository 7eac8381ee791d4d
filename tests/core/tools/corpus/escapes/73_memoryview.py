# Technique: memoryview for raw memory games.
emit_result(memoryview(b"abc").obj)
