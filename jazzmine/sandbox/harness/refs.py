"""Private references to the stdlib callables the harness relies on, taken once at import.

The entry file imports the harness before it forks the worker, so these are taken before any
tool module is loaded or any script runs; every other module of the harness uses them
instead of looking the originals up again.
"""

from __future__ import annotations

import builtins
import inspect
import json
import os
import sys
import threading
import time
import traceback

# Private references taken before any script or tool code runs: a script that rebinds
# `json.dumps` or `time.time` must not be able to break or forge the channel.
_os_write = os.write
_os_read = os.read
_now = time.time
_encode = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode
_Lock = threading.Lock
_isawaitable = inspect.isawaitable
_extract_tb = traceback.extract_tb
_format_exception = traceback.format_exception
_json_loads = json.loads
_getframe = sys._getframe
_real_getattr = builtins.getattr
_real_type = builtins.type
