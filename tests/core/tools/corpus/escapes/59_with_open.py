# Technique: Context manager over a file.
with open("/etc/passwd") as fh:
    emit_result(fh.read())
