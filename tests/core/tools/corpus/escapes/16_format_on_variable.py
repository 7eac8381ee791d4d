# Technique: Format template held in a variable cannot be checked statically.
template = "{0." + "__class__}"
emit_result(template.format(1))
