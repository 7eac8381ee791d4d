# Technique: Reading files with open().
emit_result(open("/etc/passwd").read())
