"""The ``kraftsim`` command line: one module per subcommand, ``python -m kraftsim``."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("kraftsim")
except metadata.PackageNotFoundError:  # a checkout used without installing it
    __version__ = "0+unknown"
