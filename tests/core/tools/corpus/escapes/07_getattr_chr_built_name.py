# Technique: Attribute name assembled with chr() and join to hide the dunder (crewAI CodeInterpreterTool review).
name = "".join(chr(c) for c in [95, 95, 99, 108, 97, 115, 115, 95, 95])
emit_result(getattr(1, name))
