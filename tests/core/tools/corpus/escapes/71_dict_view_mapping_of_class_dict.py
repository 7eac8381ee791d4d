# Technique: type.__dict__ through a mappingproxy, then chr-built keys (crewAI review).
emit_result(type.__dict__[chr(95) * 2 + "subclasses" + chr(95) * 2])
