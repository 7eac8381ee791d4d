# Technique: Replacement field nested inside a format spec: '{0:{1.__class__}}'.
emit_result("{0:{1.__class__}}".format(1, 2))
