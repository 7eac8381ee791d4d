# Technique: Plain import of os.
import os
emit_result(os.listdir("/"))
