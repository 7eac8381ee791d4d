# Technique: type(name, bases, dict) creates a class without a class statement.
Evil = type("Evil", (), {"__eq__": lambda s, o: True})
emit_result(Evil() == 1)
