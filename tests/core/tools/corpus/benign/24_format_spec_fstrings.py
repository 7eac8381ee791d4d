# f-strings with conversions, nested format specs and format().
user = get_user(user_id=7).data
width = 12
name = user.get("name", "")
lines = [
    f"{name!r:>{width}}",
    f"{user.get('balance', 0):,.2f}",
    f"{len(name)=}",
    format(user.get("score", 0), ".1%"),
    "{:>10} | {:<5}".format(name, user.get("tier", "-")),
    "{0} and {0}".format(name),
]
emit_result(lines)
