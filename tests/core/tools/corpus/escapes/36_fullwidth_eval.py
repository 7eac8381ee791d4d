# Technique: Unicode NFKC normalisation: fullwidth letters parse as eval (pyjail unicode tricks).
emit_result(ｅｖａｌ("1 + 1"))
