# Technique: match/case class patterns read attributes by keyword: case object(__class__=c).
match 1:
    case object(__class__=c):
        emit_result(c)
