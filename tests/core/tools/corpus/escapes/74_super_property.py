# Technique: super/property/classmethod/staticmethod descriptors.
emit_result([super(), property(len), classmethod(len), staticmethod(len)])
