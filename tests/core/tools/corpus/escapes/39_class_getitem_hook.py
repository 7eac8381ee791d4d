# Technique: Class definitions let implicit protocol hooks run code; class attributes bind builtins.
class Boom:
    __getitem__ = print
emit_result(Boom()[1])
