# Technique: type.mro() lists base classes without a dunder.
emit_result(str.mro()[1])
