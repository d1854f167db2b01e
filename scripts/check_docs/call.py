"""``python -m check_docs.call MODULE:FUNCTION OUT``: a run written in Python (several nandlab calls, a
procedure's figures worked out): calls the function with the fresh directory, prints its result as JSON."""

import importlib
import json
import sys
from pathlib import Path

module, _, function = sys.argv[1].partition(":")
result = getattr(importlib.import_module(f"check_docs.{module}"), function)(Path(sys.argv[2]))
print(json.dumps(result))
