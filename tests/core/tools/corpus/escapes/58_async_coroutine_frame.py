# Technique: Coroutine internals: async def then cr_frame.
async def co():
    return 1
emit_result(co().cr_frame)
