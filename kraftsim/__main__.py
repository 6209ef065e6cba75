"""``python -m kraftsim``: the same as the ``kraftsim`` console command."""

import sys

from kraftsim.cli import main

sys.exit(main())
