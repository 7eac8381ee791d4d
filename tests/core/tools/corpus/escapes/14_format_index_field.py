# Technique: Format field indexing into containers: '{x[0]}'.
emit_result("{x[secret]}".format(x={"secret": 1}))
