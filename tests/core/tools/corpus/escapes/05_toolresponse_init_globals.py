# Technique: ToolResponse.__init__.__globals__ reaches the module that defines the framework types.
g = ToolResponse.__init__.__globals__
emit_result(list(g))
