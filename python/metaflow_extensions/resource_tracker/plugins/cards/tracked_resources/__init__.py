"""The tracked_resources Metaflow card (a card package: Metaflow reads CARDS): the page the
@track_resources decorator adds to its step, made by card_html.render_card from the step's
artifact. Importing this stays cheap (Metaflow imports it on `import metaflow`): resource_tracker
and the HTML code are imported when a card is rendered."""

from metaflow.cards import MetaflowCard


class TrackedResourcesCard(MetaflowCard):
    """The card of a step tracked by @track_resources; options: {"artifact_name": ...}."""

    type = "tracked_resources"
    ALLOW_USER_COMPONENTS = False
    RUNTIME_UPDATABLE = False

    def __init__(self, options=None, components=None, graph=None, flow=None, **kwargs):
        self._artifact_name = "resource_tracker_data"
        try:
            super().__init__(options=options or {}, components=components or [], graph=graph, flow=flow)
        except Exception:
            pass
        if isinstance(options, dict) and options.get("artifact_name"):
            self._artifact_name = str(options["artifact_name"])

    def render(self, task):
        """The page's HTML; never raises (Metaflow would put its own error card, with a web font,
        in its place)."""
        try:
            from .card_html import render_card

            return render_card(task, self._artifact_name)
        except BaseException as e:  # noqa: B036 - a card must come out whatever happened
            import html

            return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>resource-tracker</title></head>"
                    "<body><h1>resource-tracker</h1><p>The card could not be made: "
                    + html.escape(f"{type(e).__name__}: {e}") + "</p></body></html>")


CARDS = [TrackedResourcesCard]
