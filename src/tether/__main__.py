"""`python -m tether`: the same as the `tether` command.

`-m` puts the current folder first on `sys.path`; it is taken off before anything else
is imported, so a module in the folder tether runs in (a cloned repository) is never
imported by name (a plugin `evilmod:x` next to an `evilmod.py`). Put the folder on
`PYTHONPATH` to allow that on purpose.
"""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", ".", os.getcwd()):
    del sys.path[0]

from tether.cli import main

sys.exit(main())
