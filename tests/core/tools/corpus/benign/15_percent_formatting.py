# Old-style % formatting with a mapping.
user = get_user(user_id=42).data
line = "%(name)s <%(email)s>" % user
ratio = "%.1f%%" % (100 * user.get("score", 0) / 10)
emit_result({"line": line, "ratio": ratio})
