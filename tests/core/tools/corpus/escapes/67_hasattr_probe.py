# Technique: hasattr with a dunder probes for internals.
emit_result(hasattr(emit_log, "__globals__"))
