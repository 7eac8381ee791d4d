# Technique: Dunder off an allowed module's class: datetime.datetime.now().__class__.__base__.
emit_result(datetime.datetime.now().__class__.__base__.__subclasses__())
