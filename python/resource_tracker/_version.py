"""_version.py - the package's version (the C library it binds is 0.13.0 or newer; phases need 0.14.0)."""

__version__ = "0.10.0"
