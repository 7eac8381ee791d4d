# Technique: Classic subclass walk from a literal to object.__subclasses__() (Ned Batchelder, 'Eval really is dangerous'; PyCon 2014 'Building and breaking a Python sandbox').
classes = ().__class__.__bases__[0].__subclasses__()
hits = [c for c in classes if c.__name__ == "Quitter"]
emit_result(len(hits))
