# Technique: Module bound to a variable so later attribute access escapes the allow-list.
m = json
emit_result(m.decoder.scanner)
