"""The file the runners start, copied to `<root>/harness.py` of every sandbox runtime.

`python -I <root>/harness.py <root>` leaves the script's directory off `sys.path`, so this
file puts the runtime root first (where the harness package and the shared tool modules
are, ahead of anything installed) and hands over to the relay.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    # Imported only once the root is on the path (it is not before): importing the harness
    # takes its private references, before the worker is forked and any tool is loaded.
    from jazzmine.sandbox.harness.main import main

    main(sys.argv[1] if len(sys.argv) > 1 else here)
