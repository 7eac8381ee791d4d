# Technique: input() blocks on the harness's stdin protocol.
emit_result(input("token? "))
