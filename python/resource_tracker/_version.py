"""_version.py - the package's version (the C library it binds is 0.13.0 or newer; phases need 0.14.0; energy and carbon need 0.15.0, and are absent (None) on an older one; where the job runs and its efficiency need 0.16.0)."""

__version__ = "0.12.0"
