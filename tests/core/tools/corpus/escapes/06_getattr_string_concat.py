# Technique: Computed attribute names defeat static dunder checks: getattr(x, '__cla' + 'ss__') (smarttldr sandbox-escape deep dive).
cls = getattr((), "__cla" + "ss__")
emit_result(cls)
