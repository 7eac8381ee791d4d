# Technique: __reduce_ex__ hands back copyreg helpers and getattr (asteval #86).
emit_result(print.__reduce__())
