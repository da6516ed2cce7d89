"""The @track_resources step decorator (track_resources_decorator.py)."""
