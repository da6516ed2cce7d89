"""track_resources_decorator.py - the @track_resources Metaflow step decorator: tracks the step in
the step's own process with resource_tracker's ResourceTracker (the C library's sampling thread:
no extra process; the process tree, so children too, and the machine), from task_pre_step to
task_post_step or task_exception, and stores the artifact (resource_tracker_data by default) as
plain builtins:

    {"step_failed": bool, "tracker": ResourceTracker.snapshot(),
     "historical_stats": [stats() of the last five successful runs of the same step],
     "historical_runs": [their run ids, in the same order]}

or {"error": {"error_type", "error_message", "traceback"}, "step_failed": bool} when the
tracking itself failed. Nothing here may fail the user's step: every hook catches what it
raises and logs a warning. With create_card (the default) it adds a @card of type
tracked_resources to the step and renders it for a failed step too (Metaflow's @card renders
only when the task succeeded). resource_tracker is imported in the hooks, not at import time,
as Metaflow imports this module on every `import metaflow`."""

import os
import traceback
from time import time

from metaflow.decorators import StepDecorator

CARD_TYPE = "tracked_resources"
HISTORY_RUNS = 5  # how many earlier successful runs make the history
HISTORY_SCAN = 50  # the most earlier runs looked at to find them (each costs a metadata read)


def _flag(value) -> bool:
    """An attribute as a bool: `--with track_resources:create_card=False` gives the string."""
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "0", "no", "off", "")
    return bool(value)


def _error_details(e: BaseException, what: str) -> dict:
    return {"error_type": type(e).__name__, "error_message": f"{what}: {e}",
            "traceback": traceback.format_exc()}


class ResourceTrackerDecorator(StepDecorator):
    """Tracks the resources the step uses and stores them as an artifact, with a card.

    Args (as the Python resource-tracker's decorator):
        interval: seconds between samples (default 1.0).
        artifact_name: the artifact's name (default "resource_tracker_data").
        create_card: add the tracked_resources card to the step (default True).
    """

    name = "track_resources"
    attrs = {"interval": {"type": float}, "artifact_name": {"type": str}, "create_card": {"type": bool}}
    defaults = {"interval": 1.0, "artifact_name": "resource_tracker_data", "create_card": True}

    _tracker = None
    _error = None
    _run_id = None
    _stored = False
    logger = None

    # ---- wiring (runs in every process: the runtime, the task, the card's) -------------------

    def step_init(self, flow, graph, step_name, decorators, environment, flow_datastore, logger):
        self.logger = logger
        self.card_id = "resource_tracker_" + step_name
        if not _flag(self.attributes["create_card"]):
            return
        try:
            if any(getattr(d, "name", None) == "card" and (getattr(d, "attributes", None) or {}).get("id")
                   == self.card_id for d in decorators):
                return
            from metaflow.plugins.cards.card_decorator import CardDecorator

            card = CardDecorator(attributes={"type": CARD_TYPE, "id": self.card_id,
                                             "options": {"artifact_name": self._artifact_name()}})
            if hasattr(card, "external_init"):  # what Metaflow does for the decorators it found itself
                card.external_init()
        except Exception as e:  # another Metaflow's card API: the step runs, without our card
            self._log(f"the card was not added: {type(e).__name__}: {e}")
            return
        # Metaflow's step_init loop walks this very list: the card's own step_init runs next
        decorators.append(card)

    def _artifact_name(self) -> str:
        return str(self.attributes.get("artifact_name") or "resource_tracker_data")

    def _log(self, msg: str) -> None:
        try:
            if self.logger is not None:
                self.logger(f"*WARNING* [@track_resources] {msg}", timestamp=False)
        except Exception:
            pass

    # ---- the task process ----------------------------------------------------------------------

    def task_pre_step(self, step_name, task_datastore, metadata, run_id, task_id, flow, graph, retry_count,
                      max_user_code_retries, ubf_context, inputs):
        self._run_id = str(run_id)
        self._error = None
        self._stored = False
        self._start_time = time()
        try:
            from resource_tracker import ResourceTracker

            interval = float(self.attributes["interval"])
            tracker = ResourceTracker(pid=os.getpid(), children=True, interval=interval, autostart=False)
            tracker.start()
            self._tracker = tracker
        except Exception as e:
            self._error = _error_details(e, "the resource tracker did not start")
            self._log(f"{self._error['error_message']} ({self._error['error_type']})")

    def task_post_step(self, step_name, flow, graph, retry_count, max_user_code_retries):
        self._finish(flow, step_name, failed=False)

    def task_exception(self, exception, step_name, flow, graph, retry_count, max_user_code_retries):
        self._finish(flow, step_name, failed=True)
        return None  # not handled: the step stays failed

    def task_finished(self, step_name, flow, graph, is_task_ok, retry_count, max_user_code_retries):
        if not self._stored:  # neither hook ran (the step was never entered): stop the thread
            self._stop()
        if is_task_ok or not _flag(self.attributes["create_card"]):
            return
        # Metaflow's @card renders only for a task that succeeded: render ours for a failed one
        try:
            for d in graph[step_name].decorators:
                if getattr(d, "name", None) == "card" and (d.attributes or {}).get("id") == self.card_id:
                    if d.card_creator is None:
                        return
                    d.card_creator.create(mode="render", final=True, card_uuid=d._card_uuid,
                                          user_set_card_id=d._user_set_card_id, runtime_card=d._is_runtime_card,
                                          decorator_attributes=d.attributes, card_options=d.card_options,
                                          logger=self.logger)
                    return
        except Exception as e:
            self._log(f"the card of the failed step was not rendered: {type(e).__name__}: {e}")

    # ---- stopping and storing --------------------------------------------------------------------

    def _stop(self, failed=False):
        tracker = self._tracker
        if tracker is None:
            return None
        try:
            if failed:  # a run streamed to Sentinel (SENTINEL_API_TOKEN set) ends as failed
                from resource_tracker.sentinel_api import RunStatus

                tracker.stop(exit_code=1, run_status=RunStatus.failed)
            else:
                tracker.stop()
        except Exception as e:
            if self._error is None:
                self._error = _error_details(e, "the resource tracker did not stop")
        return tracker

    def _finish(self, flow, step_name, failed):
        name = self._artifact_name()
        self._stored = True
        try:
            tracker = self._stop(failed)
            if self._error is None and tracker is not None and tracker.n_samples == 0:
                self._error = {"error_type": "ValueError", "traceback": "-",
                               "error_message": f"no sample was taken in the {time() - self._start_time:.2f} s "
                                                f"the step ran (interval {self.attributes['interval']} s)"}
            if self._error is None and tracker is not None:
                history, run_ids = self._history(flow.__class__.__name__, step_name, name)
                data = {"step_failed": bool(failed), "tracker": tracker.snapshot(),
                        "historical_stats": history, "historical_runs": run_ids}
            else:
                data = {"error": self._error or {"error_type": "RuntimeError", "traceback": "-",
                                                 "error_message": "the resource tracker never started"},
                        "step_failed": bool(failed)}
        except Exception as e:
            data = {"error": _error_details(e, "the resource tracking data was not stored"),
                    "step_failed": bool(failed)}
            self._log(f"{data['error']['error_message']} ({type(e).__name__})")
        try:
            setattr(flow, name, data)
        except Exception as e:
            self._log(f"the artifact {name} was not set: {type(e).__name__}: {e}")
        finally:
            self._tracker = None  # the C objects are freed with the tracker

    def _history(self, flow_name, step_name, name):
        """stats() of this step in the last HISTORY_RUNS successful runs of the flow before this
        one (newest first, this run left out by its id, runs whose tracking failed skipped), read
        through Metaflow's client in the task's namespace; and their run ids."""
        stats, run_ids = [], []
        try:
            from metaflow import Flow
            from resource_tracker import ResourceTracker

            runs = [r for r in Flow(flow_name).runs() if r.id != self._run_id]
            runs.sort(key=lambda r: r.created_at, reverse=True)
        except Exception as e:
            self._log(f"no history: the earlier runs were not listed: {type(e).__name__}: {e}")
            return stats, run_ids
        for run in runs[:HISTORY_SCAN]:
            if len(stats) >= HISTORY_RUNS:
                break
            try:
                if not run.successful:
                    continue
                try:
                    task = run[step_name].task
                    data = getattr(task.data, name)
                except Exception:  # no such step, task or artifact in that run
                    continue
                if not isinstance(data, dict) or data.get("error") or not data.get("tracker"):
                    continue
                stats.append(ResourceTracker.from_snapshot(data["tracker"]).stats())
                run_ids.append(run.id)
            except Exception as e:
                self._log(f"run {run.id} left out of the history: {type(e).__name__}: {e}")
        return stats, run_ids
