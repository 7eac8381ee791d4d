# Technique: from-import of subprocess under an alias.
from subprocess import check_output as co
emit_result(co(["id"]))
