# Technique: Format-string chain through __globals__ to codecs/sys (Skyvern code-block sandbox tests).
emit_result("{0.__globals__[codecs].open}".format(json.dumps))
