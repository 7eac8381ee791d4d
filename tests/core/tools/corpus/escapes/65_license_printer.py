# Technique: site's license._Printer reads files (CTF write-ups on _Printer__filenames).
emit_result(license._Printer__filenames)
