"""_lazy.py - names a module imports only when first used and then keeps as its own globals,
so that importing the module stays light and tests can still replace them there (the Python
tracker 0.5's tests patch tiny_data_frame.DictReader, sentinel_api.urlopen, ...)."""

from importlib import import_module


def lazy_globals(module_globals: dict, names: dict):
    """names: {name: the module it comes from}. Returns the module's __getattr__ (PEP 562) and
    a lookup that prefers what the module's globals hold now (a test's replacement)."""
    module = module_globals["__name__"]

    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(names[name]), name)
        module_globals[name] = value
        return value

    def lookup(name: str):
        return module_globals[name] if name in module_globals else __getattr__(name)

    return __getattr__, lookup
