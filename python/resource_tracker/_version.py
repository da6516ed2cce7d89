"""_version.py - the package's version (the C library it binds is 0.13.0 or newer)."""

__version__ = "0.9.0"
