# Technique: str.format field paths walk attributes in C: '{0.__class__.__bases__}'.format(x) (smolagents #2271, llama_index #21633, hive #715).
emit_result("{0.__class__.__bases__[0].__subclasses__}".format("a"))
