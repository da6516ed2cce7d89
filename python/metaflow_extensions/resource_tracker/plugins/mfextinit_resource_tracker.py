"""mfextinit_resource_tracker.py - registers resource-tracker's Metaflow step decorator: Metaflow
reads STEP_DECORATORS_DESC here (its "plugins" extension point), so that
`from metaflow import track_resources` works wherever both packages are importable. The card
type `tracked_resources` is found by Metaflow in plugins/cards/ (a namespace package). Nothing
here imports resource_tracker: `import metaflow` stays cheap."""

STEP_DECORATORS_DESC = [
    ("track_resources", ".track_resources.track_resources_decorator.ResourceTrackerDecorator"),
]
