# Inspect ToolResponse objects and keep only successful ones.
responses = [get_user(user_id=uid) for uid in (1, 2, 3)]
ok = [r.data for r in responses if isinstance(r, ToolResponse) and r.success]
emit_log(f"{len(ok)} of {len(responses)} lookups succeeded")
emit_result(ok)
