# Technique: Mathematical-alphanumeric homoglyphs normalise to open.
emit_result(𝘰𝘱𝘦𝘯("/etc/passwd"))
