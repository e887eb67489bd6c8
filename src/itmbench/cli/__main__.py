"""`python -m itmbench.cli ...`: the same as `itmbench ...`."""

import sys

from itmbench.cli import main

sys.exit(main())
